import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Catalog } from '../catalog';
import { CatalogError } from '../errors';
import { createMetricsHandler, type MetricsHandlerOptions } from './metrics-handler';

export interface MetricsServerOptions extends MetricsHandlerOptions {
  port: number;
  /** Default `127.0.0.1`: metrics tell a lot about a service, so they are not exposed unless asked. */
  host?: string;
}

export interface RunningMetricsServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** `GET /metrics` on a listener of its own (a port the scraper reaches, apart from the API's). */
export async function startMetricsServer(catalog: Catalog, options: MetricsServerOptions): Promise<RunningMetricsServer> {
  const { port, host = '127.0.0.1' } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new CatalogError('INVALID_INPUT', `metrics port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const handler = createMetricsHandler(catalog, options);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'metrics are at /metrics' } }));
      return;
    }
    handler(new Request(`http://metrics${path}`, { method: req.method ?? 'GET' })).then(
      async (response) => {
        res.writeHead(response.status, { 'content-type': response.headers.get('content-type') ?? 'text/plain' });
        res.end(req.method === 'HEAD' ? undefined : await response.text());
      },
      (error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`metrics failed: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}/metrics`,
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

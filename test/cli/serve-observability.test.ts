import { describe, expect, it } from 'vitest';
import { serve } from '../../src/cli/commands/serve';
import { serviceLog } from '../../src/cli/service-log';
import { parsePrometheusText } from '../support/prometheus-text';
import { spawnServe } from './helpers';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,observed.orders,PROD)';
const ROUTE = '/openapi/v2/entity/{entityName}/{urn}/{aspectName}';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) }, out, err };
}

/** Every line parses as JSON (throws naming the line otherwise). */
function jsonLines(chunks: readonly string[]): Array<Record<string, unknown>> {
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
}

describe('serve: --log-format json and --metrics-port', () => {
  it('writes every line as JSON: the access log with route, status, duration, request id and actor, never the token', async () => {
    const { io, out, err } = capture();
    const handle = await serve({ db: ':memory:', port: 0, metricsPort: 0, logFormat: 'json' }, io);
    const token = /export METACATALOG_TOKEN=([A-Za-z0-9._-]+)/.exec(out.join(''))![1]!;
    let requestId: string | null;
    try {
      const path = `/openapi/v2/entity/dataset/${encodeURIComponent(DATASET)}/datasetProperties`;
      const written = await fetch(`${handle.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': 'req-observed-1' },
        body: JSON.stringify({ name: 'observed' }),
      });
      expect(written.status).toBe(200);
      requestId = written.headers.get('x-request-id');
      expect((await fetch(`${handle.url}${path}?access_token=${token}`)).status).toBe(401);

      expect(handle.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const metrics = parsePrometheusText(await (await fetch(handle.metricsUrl!)).text());
      expect(metrics.value('metacatalog_http_requests_total', { method: 'POST', route: ROUTE, status: '200' })).toBe(1);
      expect(metrics.value('metacatalog_token_verifications_total', { outcome: 'ok' })).toBe(1);
    } finally {
      await handle.stop();
    }
    const lines = jsonLines(out);
    jsonLines(err);
    const access = lines.filter((l) => l.msg === 'request');
    expect(access).toHaveLength(2);
    expect(access[0]).toMatchObject({
      level: 'info',
      method: 'POST',
      route: ROUTE,
      status: 200,
      requestId: 'req-observed-1',
      actor: 'urn:li:corpuser:admin',
    });
    expect(requestId).toBe('req-observed-1');
    expect(typeof access[0]!.durationMs).toBe('number');
    expect(Number.isNaN(Date.parse(String(access[0]!.time)))).toBe(false);
    expect(access[1]).toMatchObject({ status: 401, errorCode: 'UNAUTHENTICATED', route: ROUTE });
    for (const line of access) expect(JSON.stringify(line)).not.toContain(token);
    expect(lines.some((l) => String(l.msg).includes('listening on'))).toBe(true);
  });

  it('an unexpected error is one JSON line with the request id, route and error', () => {
    const { io, err } = capture();
    serviceLog('json', io).requestError(new Error('boom'), {
      requestId: 'r-1',
      method: 'POST',
      path: '/api/graphql',
      route: '/api/graphql',
      where: 'graphql entity',
    });
    const [line] = jsonLines(err);
    expect(line).toMatchObject({
      level: 'error',
      requestId: 'r-1',
      route: '/api/graphql',
      where: 'graphql entity',
      error: { name: 'Error', message: 'boom' },
    });
  });

  it('the command line takes the options (built CLI)', async () => {
    const served = await spawnServe(['--db', ':memory:', '--metrics-port', '0', '--log-format', 'json']);
    try {
      const deadline = Date.now() + 10_000;
      while (!/metrics at (http:\/\/\S+\/metrics)/.test(served.output()) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const url = /metrics at (http:\/\/\S+\/metrics)/.exec(served.output())![1]!;
      expect(parsePrometheusText(await (await fetch(url)).text()).types.get('metacatalog_jobs')).toBe('gauge');
    } finally {
      served.child.kill('SIGTERM');
      expect(await served.exit).toBe(0);
    }
    for (const line of served.output().split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TokenSigningAlgorithm } from '../core/tokens';
import { unresolvedPeers } from '../adapter/peer';
import { GRAPHQL_PEERS } from '../http/routes/graphql-schema';
import type { CommandIo } from './io';
import { openCatalog } from './open-catalog';
import { generateSigningKey } from './signing-key';

/** Concurrent clients of the warm-up: as many as a busy service sees at once, so that writes form commit groups. */
const CLIENTS = 16;
/** The warm-up stops after this many requests, or at its time budget, whichever comes first. */
const MAX_REQUESTS = 5_000;

export interface WarmUpOptions {
  /** How long the warm-up's requests may take at most (milliseconds), after the scratch catalog opened. */
  budgetMs: number;
  /** The service's SQLite durability (the scratch catalog commits the same way). */
  durability?: 'full' | 'normal';
  /** The super user the warm-up's requests act as. */
  admin: string;
  /** The service's token algorithm: the warm-up's token is signed and verified the same way. */
  algorithm: TokenSigningAlgorithm;
  /** The service's admission limit (`--max-in-flight`), so that the same code answers. */
  maxInFlight?: number;
}

export interface WarmUpReport {
  requests: number;
  ms: number;
}

/**
 * `serve`'s warm-up, before it listens (docs/operations.md, "The first seconds of a process"): the service answers
 * requests of its own — single-aspect writes, reads of the entities written, GraphQL searches — on a
 * scratch catalog in a new temporary directory, through a loopback listener and the same request handler
 * as the service, for at most `budgetMs`. V8 compiles what a request runs only after it ran it many times
 * (a cold process spends up to three times the CPU per request for its first seconds); this way the first
 * clients meet compiled code. The user's database is not touched: it is opened after the warm-up, and its
 * adapter takes over the scratch catalog's commit thread (compiled by then) when the thread was parked.
 * The scratch catalog, its file and its key are deleted; nothing is logged but one line.
 */
export async function warmUp(options: WarmUpOptions, io: CommandIo): Promise<WarmUpReport> {
  const started = performance.now();
  let deadline = Infinity;
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-warm-up-'));
  let requests = 0;
  try {
    const catalog = await openCatalog(
      {
        store: { sqlite: join(directory, 'warm-up.db'), ...(options.durability !== undefined ? { durability: options.durability } : {}) },
        superUser: options.admin,
        tokenSigningKey: generateSigningKey(options.algorithm),
        tokenAlgorithm: options.algorithm,
        backgroundJobs: true,
        label: 'the warm-up catalog',
        onError: () => {},
      },
      io,
    );
    const { startServer } = await import('../http/server');
    let server: Awaited<ReturnType<typeof startServer>> | undefined;
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    try {
      server = await startServer(catalog, {
        port: 0,
        host: '127.0.0.1',
        ...(options.maxInFlight !== undefined
          ? { admission: options.maxInFlight === 0 ? false : { maxInFlight: options.maxInFlight } }
          : {}),
        onError: () => {},
      });
      const issued = await catalog.tokens.ensureBootstrapToken({ actorUrn: options.admin, name: 'warm-up', fresh: true, force: true });
      const token = issued?.accessToken;
      const port = server.port;
      const graphql = unresolvedPeers(GRAPHQL_PEERS).length === 0;
      const call = (method: string, path: string, body?: string) =>
        new Promise<void>((resolve) => {
          const req = request(
            {
              agent,
              host: '127.0.0.1',
              port,
              method,
              path,
              headers: {
                ...(token ? { authorization: `Bearer ${token}` } : {}),
                ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
              },
            },
            (res) => {
              res.resume();
              res.once('end', resolve);
              res.once('error', () => resolve());
            },
          );
          req.once('error', () => resolve());
          req.end(body);
        });
      // The budget is the requests' (opening the scratch catalog takes a few hundred ms more).
      deadline = performance.now() + options.budgetMs;
      const more = () => requests < MAX_REQUESTS && performance.now() < deadline;
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, client) => {
          for (let i = 0; more(); i++) {
            const urn = encodeURIComponent(`urn:li:dataset:(urn:li:dataPlatform:warmup,c${client}.n${i},PROD)`);
            requests++;
            await call(
              'POST',
              `/openapi/v2/entity/dataset/${urn}/datasetProperties`,
              JSON.stringify({ name: `n${i}`, description: `written by the warm-up, client ${client}` }),
            );
            if (i % 4 === 3 && more()) {
              requests++;
              await call('GET', `/openapi/v2/entity/dataset/${urn}`);
            }
            if (graphql && i % 8 === 7 && more()) {
              requests++;
              await call(
                'POST',
                '/api/graphql',
                JSON.stringify({
                  query:
                    'query s($input: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $input) { total searchResults { entity { urn } } } }',
                  variables: { input: { types: ['DATASET'], query: `client ${client}`, start: 0, count: 10 } },
                }),
              );
            }
          }
        }),
      );
    } finally {
      agent.destroy();
      await server?.close();
      await catalog.close();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return { requests, ms: performance.now() - started };
}

import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import { requireWithPeer } from '../adapter/peer';

export type Prom = typeof PromClient;

/**
 * prom-client (an optional peer dependency) is loaded on the first call that asks for metrics: importing the
 * HTTP layer stays cheap, and an application that serves no metrics need not install it.
 */
let prom: Prom | undefined;
export function promClient(): Prom {
  prom ??= requireWithPeer(
    'metrics (createMetricsHandler of metacatalog/http, serve --metrics-port)',
    'prom-client',
    () => createRequire(import.meta.url)('prom-client') as Prom,
  );
  return prom;
}

import type { Catalog } from '../catalog';
import type { TokenSigningAlgorithm } from '../core/tokens';
import { errorKind, limitRepeats } from '../core/logging/index';
import { CatalogError, isCatalogError } from '../errors';
import { CommandError, type CommandIo } from './io';

/** Where the command line keeps its catalog. */
type CatalogStore =
  { sqlite: string; durability?: 'full' | 'normal' } | { postgres: string; schema?: string; replicas?: readonly string[] };

export interface OpenCatalogOptions {
  store: CatalogStore;
  /** The super user the command acts as (or the service's admin). */
  superUser: string;
  tokenSigningKey?: string;
  /** The algorithm of `tokenSigningKey` (default HS256; EdDSA and ES256 take a PEM private key). */
  tokenAlgorithm?: TokenSigningAlgorithm;
  /** Background work in this process as it is queued (the service), or only in `settle()` (one command). */
  backgroundJobs: boolean;
  /** How the store is named in messages (a PostgreSQL URL without its password). */
  label: string;
  /** Errors of background work; default: one line on stderr. */
  onError?: (error: unknown, where: string) => void;
}

/**
 * The one way the command line opens a catalog: the adapter of the store (loaded only when used), the
 * catalog's errors from background work on stderr, and a failed open as a CommandError naming the store.
 */
export async function openCatalog(options: OpenCatalogOptions, io: CommandIo): Promise<Catalog> {
  const { createCatalog } = await import('../catalog');
  const { store } = options;
  // Background work failing the same way again and again (the database gone) is written once per interval.
  const errors = limitRepeats((line) => io.stderr(line));
  try {
    const adapter =
      'sqlite' in store
        ? (await import('../../adapters/sqlite/index')).createSqliteAdapter({
            filename: store.sqlite,
            ...(store.durability !== undefined ? { durability: store.durability } : {}),
            // The commit thread keeps a service's event loop free for other requests; a one-shot command
            // serves no one else meanwhile, and starting the thread would add ~50 ms to every command.
            // The same for the reader threads that keep searches off a service's event loop.
            ...(options.backgroundJobs ? {} : { syncOffEventLoop: false, readerThreads: 0 }),
          })
        : (await import('../../adapters/postgres/index')).createPostgresAdapter(
            { connectionString: store.postgres, ...(store.replicas?.length ? { replicas: store.replicas } : {}) },
            {
              ...(store.schema !== undefined ? { schema: store.schema } : {}),
              onReplicaEvent: (message: string) => io.stderr(`metacatalog: ${message}\n`),
            },
          );
    const catalog = createCatalog({
      adapter,
      ...(options.tokenSigningKey === undefined
        ? {}
        : { tokenSigning: { algorithm: options.tokenAlgorithm ?? 'HS256', keys: [options.tokenSigningKey] } }),
      superUsers: [options.superUser],
      ...(options.backgroundJobs ? {} : { jobs: { background: false } }),
      onError:
        options.onError ??
        ((error, where) =>
          errors(`${where} ${errorKind(error)}`, `metacatalog: ${where}: ${error instanceof Error ? error.message : String(error)}`)),
    });
    await catalog.ready();
    return catalog;
  } catch (error) {
    const message = `cannot open the database ${options.label}: ${error instanceof Error ? error.message : String(error)}`;
    if (isCatalogError(error) && error.code === 'UNAVAILABLE')
      throw new CatalogError('UNAVAILABLE', message, { cause: error, reason: error.reason });
    throw new CommandError(message);
  }
}

/** A connection URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the PostgreSQL database';
  }
}

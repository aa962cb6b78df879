import type { Catalog } from '../catalog';
import { CommandError, type CommandIo } from './io';

/** Where the command line keeps its catalog. */
export type CatalogStore = { sqlite: string; durability?: 'full' | 'normal' } | { postgres: string; schema?: string };

export interface OpenCatalogOptions {
  store: CatalogStore;
  /** The super user the command acts as (or the service's admin). */
  superUser: string;
  tokenSigningKey?: string;
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
  try {
    const adapter =
      'sqlite' in store
        ? (await import('../../adapters/sqlite/index')).createSqliteAdapter({
            filename: store.sqlite,
            ...(store.durability !== undefined ? { durability: store.durability } : {}),
          })
        : (await import('../../adapters/postgres/index')).createPostgresAdapter(
            { connectionString: store.postgres },
            store.schema !== undefined ? { schema: store.schema } : {},
          );
    const catalog = createCatalog({
      adapter,
      ...(options.tokenSigningKey !== undefined ? { tokenSigningKey: options.tokenSigningKey } : {}),
      superUsers: [options.superUser],
      ...(options.backgroundJobs ? {} : { jobs: { background: false } }),
      onError:
        options.onError ??
        ((error, where) => io.stderr(`metacatalog: ${where}: ${error instanceof Error ? error.message : String(error)}\n`)),
    });
    await catalog.ready();
    return catalog;
  } catch (error) {
    throw new CommandError(`cannot open the database ${options.label}: ${error instanceof Error ? error.message : String(error)}`);
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

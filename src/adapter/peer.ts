import { CatalogError } from '../errors';

/**
 * Loads the implementation of an entry point that needs an optional peer dependency (better-sqlite3,
 * lunr, pg, graphql). Without the peer installed, Node's own error is a bare "Cannot find package";
 * this names the package, the entry that needs it and the command that installs it.
 */
export async function loadWithPeer<T>(entry: string, peer: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e?.code === 'ERR_MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.includes(`'${peer}'`)) {
      throw new CatalogError(
        'UNSUPPORTED',
        `${entry} needs the package ${peer}, an optional peer dependency that is not installed: npm install ${peer}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

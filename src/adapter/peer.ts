import { createRequire } from 'node:module';
import { CatalogError } from '../errors';

/** The package a "not found" error of Node's (import or require) names, when it is one of `peers`. */
function missingPeer(error: unknown, peers: readonly string[]): string | undefined {
  const e = error as NodeJS.ErrnoException;
  if ((e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'MODULE_NOT_FOUND') || typeof e.message !== 'string') return undefined;
  return peers.find((peer) => e.message.includes(`'${peer}'`));
}

/** The packages of `peers` that do not resolve from here (not installed where the package's code is). */
export function unresolvedPeers(peers: readonly string[]): string[] {
  // import.meta.resolve resolves as an import does (module hooks included); a runner without it falls back to require's resolution.
  const resolve =
    typeof import.meta.resolve === 'function' ? import.meta.resolve.bind(import.meta) : createRequire(import.meta.url).resolve;
  return peers.filter((peer) => {
    try {
      resolve(peer);
      return false;
    } catch {
      return true;
    }
  });
}

/** The error that names what is missing (with every other one of `peers` that does not resolve) and the command that installs it. */
function peerError(entry: string, peers: readonly string[], missing: string, cause: unknown): CatalogError {
  const others = unresolvedPeers(peers.filter((peer) => peer !== missing));
  const absent = peers.filter((peer) => peer === missing || others.includes(peer));
  const names =
    absent.length === 1
      ? `the package ${absent[0]}, an optional peer dependency that is`
      : `the packages ${absent.join(', ')}, optional peer dependencies that are`;
  return new CatalogError('UNSUPPORTED', `${entry} needs ${names} not installed: npm install ${absent.join(' ')}`, { cause });
}

/**
 * Loads the implementation of an entry point that needs optional peer dependencies (better-sqlite3,
 * lunr, pg, graphql with @graphql-tools/schema). Without a peer installed, Node's own error is a bare
 * "Cannot find package"; this names the packages, the entry that needs them and the command that installs them.
 */
export async function loadWithPeer<T>(entry: string, peer: string | readonly string[], load: () => Promise<T>): Promise<T> {
  const peers = typeof peer === 'string' ? [peer] : peer;
  try {
    return await load();
  } catch (error) {
    const missing = missingPeer(error, peers);
    if (missing !== undefined) throw peerError(entry, peers, missing, error);
    throw error;
  }
}

/** The synchronous form, for a peer loaded by a call that cannot wait (prom-client, when metrics are first asked for). */
export function requireWithPeer<T>(entry: string, peer: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (missingPeer(error, [peer]) !== undefined) throw peerError(entry, [peer], peer, error);
    throw error;
  }
}

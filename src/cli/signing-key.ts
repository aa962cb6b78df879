import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { CommandError } from './io';

/** The signing key of a database file lives beside it: `<db>.signing-key`. */
export function signingKeyFileOf(dbFile: string): string {
  return `${dbFile}.signing-key`;
}

export interface SigningKeyFile {
  key: string;
  file: string;
  /** Created by this call (tokens signed with an earlier key, if any, no longer verify). */
  created: boolean;
}

const KEY_BYTES = 32;

/**
 * Reads the key file, or creates it (32 random bytes, base64url, mode 0600, exclusive create so two
 * processes starting at once cannot both write one). Refuses a key file that group or others may read
 * or write (like ssh does with private keys): whoever reads it can mint tokens for any actor.
 */
export function loadOrCreateSigningKey(file: string): SigningKeyFile {
  let mode: number | undefined;
  try {
    mode = statSync(file).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new CommandError(`cannot read the signing key ${file}: ${(error as Error).message}`);
  }
  if (mode === undefined) {
    const key = randomBytes(KEY_BYTES).toString('base64url');
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSigningKey(file);
      throw new CommandError(`cannot create the signing key ${file}: ${(error as Error).message}`);
    }
    try {
      writeSync(fd, `${key}\n`);
    } finally {
      closeSync(fd);
    }
    chmodSync(file, 0o600);
    return { key, file, created: true };
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    const shown = (mode & 0o777).toString(8).padStart(4, '0');
    throw new CommandError(`refusing to start: the signing key ${file} has mode ${shown}, so others may read it; run: chmod 600 ${file}`);
  }
  const key = readFileSync(file, 'utf8').trim();
  if (Buffer.byteLength(key) < KEY_BYTES) {
    throw new CommandError(
      `the signing key ${file} is shorter than ${KEY_BYTES} bytes; remove it to have a new one generated (existing tokens stop working)`,
    );
  }
  return { key, file, created: false };
}

import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import type { TokenSigningAlgorithm } from '../core/tokens';
import { CommandError } from './io';

/** The signing key of a database file lives beside it: `<db>.signing-key`. */
export function signingKeyFileOf(dbFile: string): string {
  return `${dbFile}.signing-key`;
}

export interface SigningKeyFile {
  key: string;
  /** What the file holds: an HS256 secret, or a PEM private key (Ed25519: EdDSA, P-256: ES256). */
  algorithm: TokenSigningAlgorithm;
  file: string;
  /** Created by this call (tokens signed with an earlier key, if any, no longer verify). */
  created: boolean;
}

const KEY_BYTES = 32;

/** A new key: 32 random bytes (base64url) for HS256, else a PKCS#8 PEM private key (it holds the public key too). */
export function generateSigningKey(algorithm: TokenSigningAlgorithm): string {
  if (algorithm === 'HS256') return randomBytes(KEY_BYTES).toString('base64url');
  const { privateKey } = algorithm === 'EdDSA' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** The algorithm a key text is for: a PEM private key by its type, anything else an HS256 secret; undefined for a PEM key that fits none. */
export function algorithmOfKey(key: string): TokenSigningAlgorithm | undefined {
  if (!key.startsWith('-----BEGIN')) return 'HS256';
  try {
    const parsed = createPrivateKey(key);
    if (parsed.asymmetricKeyType === 'ed25519') return 'EdDSA';
    if (parsed.asymmetricKeyType === 'ec' && parsed.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  } catch {
    // Not a private key: said by the caller.
  }
  return undefined;
}

/**
 * Reads the key file, or creates it for `algorithm` (default HS256: 32 random bytes, base64url; EdDSA or
 * ES256: a PEM private key), mode 0600, exclusive create so two processes starting at once cannot both
 * write one. Refuses a key file that group or others may read or write (like ssh does with private
 * keys): whoever reads it can mint tokens for any actor. An existing file keeps its algorithm; asking for
 * another one is refused (tokens signed before would stop verifying).
 */
export function loadOrCreateSigningKey(file: string, algorithm?: TokenSigningAlgorithm): SigningKeyFile {
  let mode: number | undefined;
  try {
    mode = statSync(file).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new CommandError(`cannot read the signing key ${file}: ${(error as Error).message}`);
  }
  if (mode === undefined) {
    const wanted = algorithm ?? 'HS256';
    const key = generateSigningKey(wanted);
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSigningKey(file, algorithm);
      throw new CommandError(`cannot create the signing key ${file}: ${(error as Error).message}`);
    }
    try {
      writeSync(fd, `${key.trim()}\n`);
    } finally {
      closeSync(fd);
    }
    chmodSync(file, 0o600);
    return { key: key.trim(), algorithm: wanted, file, created: true };
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    const shown = (mode & 0o777).toString(8).padStart(4, '0');
    throw new CommandError(`refusing to start: the signing key ${file} has mode ${shown}, so others may read it; run: chmod 600 ${file}`);
  }
  const key = readFileSync(file, 'utf8').trim();
  const held = algorithmOfKey(key);
  if (held === undefined) {
    throw new CommandError(`the signing key ${file} is a PEM key but not an Ed25519 or P-256 private key (EdDSA, ES256)`);
  }
  if (algorithm !== undefined && held !== algorithm) {
    throw new CommandError(
      `the signing key ${file} is for ${held}, not ${algorithm}; leave out --token-algorithm to keep it, or remove the file to have a new ${algorithm} key generated (tokens issued before stop verifying)`,
    );
  }
  if (held === 'HS256' && Buffer.byteLength(key) < KEY_BYTES) {
    throw new CommandError(
      `the signing key ${file} is shorter than ${KEY_BYTES} bytes; remove it to have a new one generated (existing tokens stop working)`,
    );
  }
  return { key, algorithm: held, file, created: false };
}

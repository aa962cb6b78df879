import { CatalogError } from '../errors';

/**
 * One codec for every opaque cursor the catalog hands out (scroll ids of searches, entity listings and
 * timeseries pages): base64url of a small JSON object. What the object holds is its issuer's; a cursor
 * that does not decode to the issuer's shape is refused with INVALID_INPUT naming where it was given.
 */

export function encodeCursor(state: Readonly<Record<string, unknown>>): string {
  return Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
}

/** The cursor's object, read by `read` (which returns undefined when it is not its shape); undefined when malformed. */
export function decodeCursor<T>(cursor: string, read: (state: Record<string, unknown>) => T | undefined): T | undefined {
  let state: unknown;
  try {
    state = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return state !== null && typeof state === 'object' && !Array.isArray(state) ? read(state as Record<string, unknown>) : undefined;
}

/** The refusal of a cursor that is not one this catalog gave out for that listing. */
export function malformedCursor(
  path: string,
  message = 'is not a cursor this catalog gave out (pass back the one of the previous page)',
): CatalogError {
  return new CatalogError('INVALID_INPUT', `${path.replace(/^\//, '')} ${message}`, { details: [{ path, message }] });
}

/** A position in a SQL adapter's timeseries table: the row's timestamp and id. */
export interface RowCursor {
  ts: number;
  id: number;
}

export function encodeRowCursor(position: RowCursor): string {
  return encodeCursor({ ts: position.ts, id: position.id });
}

export function decodeRowCursor(cursor: string): RowCursor {
  const position = decodeCursor(cursor, ({ ts, id }) =>
    Number.isSafeInteger(ts) && Number.isSafeInteger(id) ? { ts: ts as number, id: id as number } : undefined,
  );
  if (!position) throw malformedCursor('scrollId', 'is not a timeseries cursor this catalog gave out');
  return position;
}

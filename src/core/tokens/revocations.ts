import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import { decodeCursor, encodeCursor, malformedCursor } from '../../adapter/cursor';
import { CatalogError } from '../../errors';
import { tokenEntities } from './listing';
import { expiresAtOf, revokedAtOf, TOKEN_ENTITY, type ReadRevocationsInput, type RevokedToken, type TokenRevocationPage } from './model';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
/**
 * How far back the cursor of a short (last) page is set: a revocation stamped before a read but committed
 * after it, or stamped by an instance whose clock is behind, still reaches a verifier that polls with `next`.
 */
const REVOCATION_SETTLE_MS = 60_000;

/** A place in the feed: revocations are ordered by their time, then by token id. */
type Position = { t: number; id: string };

interface Revocation extends RevokedToken {
  revokedAt: number;
}

function isAfter(r: Revocation, p: Position): boolean {
  return r.revokedAt > p.t || (r.revokedAt === p.t && r.tokenId > p.id);
}

function decodePosition(after: unknown): Position | undefined {
  if (after === undefined || after === null || after === '') return undefined;
  const position =
    typeof after === 'string'
      ? decodeCursor(after, ({ t, id }) => (Number.isSafeInteger(t) && typeof id === 'string' ? { t: t as number, id } : undefined))
      : undefined;
  if (!position)
    throw malformedCursor('after', 'is not a revocation cursor this catalog gave out (pass back the `next` of an earlier answer)');
  return position;
}

/** The revoked tokens not yet expired, from every token record (token counts are small; listing does the same). */
async function currentRevocations(ctx: CatalogContext, now: number): Promise<Revocation[]> {
  const out: Revocation[] = [];
  for await (const entity of tokenEntities(ctx)) {
    const revokedAt = revokedAtOf(entity);
    const expiresAt = expiresAtOf(entity);
    if (revokedAt === undefined || (expiresAt !== null && expiresAt <= now)) continue;
    out.push({ tokenId: entity.urn.slice(`urn:li:${TOKEN_ENTITY}:`.length), expiresAt, revokedAt });
  }
  return out.sort((a, b) => a.revokedAt - b.revokedAt || (a.tokenId < b.tokenId ? -1 : 1));
}

/** `catalog.tokens.revocations`: VIEW_TOKEN_REVOCATIONS. */
export async function readRevocations(ctx: CatalogContext, actor: Actor, input: ReadRevocationsInput = {}): Promise<TokenRevocationPage> {
  await ctx.authenticate(actor);
  await ctx.authorizer.require(actor, 'VIEW_TOKEN_REVOCATIONS', 'read the revoked access tokens');
  const request = typeof input === 'object' && input !== null ? input : {};
  const limit = request.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    const message = `must be an integer from 1 to ${MAX_LIMIT}`;
    throw new CatalogError('INVALID_INPUT', `limit ${message}, got ${String(limit)}`, { details: [{ path: 'limit', message }] });
  }
  const after = decodePosition(request.after);
  const now = ctx.clock();
  const pending = (await currentRevocations(ctx, now)).filter((r) => !after || isAfter(r, after));
  const page = pending.slice(0, limit);
  const last = page.at(-1);
  let next: Position = last ? { t: last.revokedAt, id: last.tokenId } : (after ?? { t: 0, id: '' });
  // A full page continues exactly where it ended; a short one means "caught up", and the next read starts a
  // minute back (repeating those entries) so that a revocation committed late is not skipped.
  if (page.length < limit) {
    const settled = now - REVOCATION_SETTLE_MS;
    if (next.t >= settled) next = { t: Math.max(0, settled), id: '' };
  }
  return { revoked: page.map(({ tokenId, expiresAt }) => ({ tokenId, expiresAt })), next: encodeCursor(next) };
}

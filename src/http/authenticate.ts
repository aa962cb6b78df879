import type { Catalog } from '../catalog';
import { requireActor, type Actor } from '../core/access';
import { CatalogError } from '../errors';

const BEARER = /^Bearer +([^\s]+) *$/i;

/**
 * The actor of a request. `Authorization: Bearer <token>` is verified by the catalog (signature,
 * expiry, revocation: UNAUTHENTICATED with the reason otherwise). Only without an Authorization header,
 * and only when the host trusts its front (`trustActorHeader`), does `X-Service-Actor` name the actor.
 * Nothing else authenticates: no credentials is UNAUTHENTICATED (`missing`). With the actor, the verified
 * token's id (the key of its rate limit), when a token authenticated.
 */
export async function authenticateRequest(
  catalog: Catalog,
  header: (name: string) => string | undefined,
  trustActorHeader: boolean,
): Promise<{ actor: Actor; tokenId?: string }> {
  const authorization = header('authorization');
  if (authorization !== undefined) {
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) {
      throw new CatalogError('UNAUTHENTICATED', 'the Authorization header must be "Bearer <access token>"', { reason: 'malformed' });
    }
    const verified = await catalog.tokens.verify(token);
    const actor: Actor = verified.privileges === null ? verified.actorUrn : { urn: verified.actorUrn, scopes: verified.privileges };
    return { actor, tokenId: verified.tokenId };
  }
  const actorHeader = header('x-service-actor');
  if (actorHeader !== undefined) {
    if (!trustActorHeader) {
      throw new CatalogError(
        'UNAUTHENTICATED',
        'this server does not take the actor from X-Service-Actor; send "Authorization: Bearer <access token>"',
        {
          reason: 'missing',
        },
      );
    }
    return { actor: requireActor(actorHeader.trim()) };
  }
  throw new CatalogError('UNAUTHENTICATED', 'no credentials: send "Authorization: Bearer <access token>"', { reason: 'missing' });
}

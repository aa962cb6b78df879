import type { Actor } from '../access/actor';
import type { JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { DomainOwners, EntityDeleter, OwnedChange, OwnedItem } from '../entities/owner';
import { CatalogError } from '../../errors';
import { expiresAtOf, toAspectValue, toMetadata, TOKEN_ASPECT, TOKEN_ENTITY, TOKEN_REVOKED_AT } from './model';

/**
 * The tokens domain's own edits of a token record, built by `catalog.tokens` after its checks
 * (authorization, scopes) and planned by the token owner in the write path: a new record with its
 * salted hash, a revocation (refused for another actor's token without MANAGE_ACCESS_TOKENS, checked on
 * the record the unit of work reads). `recordUse` and `expire` are bookkeeping (written by no user):
 * the time a token was last used, and the removal of an expired record.
 */
export type TokenEdit =
  | { kind: 'issue'; id: string; value: JsonObject; systemMetadata: JsonObject }
  | { kind: 'revoke'; id: string; caller: string; manager: boolean }
  | { kind: 'recordUse'; now: number; resolutionMs: number }
  | { kind: 'expire'; now: number };

const REFUSAL = `${TOKEN_ASPECT} is written only by catalog.tokens.create`;

function isExpired(expiresAt: number | null | undefined, now: number): boolean {
  return typeof expiresAt === 'number' && expiresAt <= now;
}

/** The owner's plan of an edit, on the record as the unit of work reads it (`result`: for `expire`, whether the record goes). */
function planEdit(ctx: CatalogContext, item: OwnedItem, stored: StoredEntity | undefined): OwnedChange | undefined {
  const edit = item.edit as TokenEdit;
  if ((edit.kind === 'recordUse' || edit.kind === 'expire') && !item.system)
    throw new Error(`internal: "${edit.kind}" of an access token is the catalog's bookkeeping, never a user's write`);
  switch (edit.kind) {
    case 'issue':
      if (stored) throw new CatalogError('CONFLICT', `access token ${edit.id} exists already`);
      return { put: { value: edit.value, systemMetadata: edit.systemMetadata } };
    case 'revoke':
      if (!stored || !toMetadata(stored))
        throw new CatalogError('NOT_FOUND', `no access token with id ${edit.id} (unknown, expired and removed, or revoked already)`);
      // The record stays, marked, until the token expires (the revocation feed lists it until then); its
      // hash goes, since nothing is verified against it any more.
      return { put: { value: { ...stored.aspects[TOKEN_ASPECT]!.value, [TOKEN_REVOKED_AT]: ctx.clock() } } };
    case 'recordUse': {
      const latest = stored && toMetadata(stored);
      const aspect = stored?.aspects[TOKEN_ASPECT];
      // Revoked meanwhile, or another verification recorded the use already: nothing to do.
      if (!latest || !aspect || (latest.lastUsedAt !== null && edit.now - latest.lastUsedAt < edit.resolutionMs)) return undefined;
      const value = toAspectValue({ ...latest, lastUsedAt: edit.now });
      return { put: { value, ...(aspect.systemMetadata ? { systemMetadata: aspect.systemMetadata } : {}) } };
    }
    case 'expire':
      // Re-checked on the fresh read: only what is still there and still expired goes.
      return stored !== undefined && isExpired(expiresAtOf(stored), edit.now) ? { deleteEntity: true, result: true } : undefined;
  }
}

/**
 * What the tokens domain owns: the token record aspect (written only by `catalog.tokens`: its edits
 * are planned here, any other write is refused) and the token entity (generic reads never see it).
 */
export function tokenOwners(ctx: CatalogContext): DomainOwners {
  return {
    aspects: [
      {
        name: 'access tokens',
        governs: (_type, aspect) => aspect === TOKEN_ASPECT,
        // A generic write is refused after EDIT_ENTITY; the service authorized its own edits (for oneself, for another).
        privilege: (_type, _aspect, op) => (op === 'edit' ? undefined : 'EDIT_ENTITY'),
        // Revoking another actor's token needs MANAGE_ACCESS_TOKENS: whose token it is, is read in the unit of work.
        async authorize(principal: Actor, item, entity) {
          const edit = item.edit as TokenEdit | undefined;
          if (edit?.kind !== 'revoke' || edit.manager) return;
          const metadata = entity && toMetadata(entity);
          if (metadata && metadata.ownerUrn !== edit.caller)
            await ctx.authorizer.require(principal, 'MANAGE_ACCESS_TOKENS', 'revoke access tokens of other actors');
        },
        async prepare(_principal, items, violations) {
          for (const item of items) if (item.op !== 'edit') violations.push({ path: item.path, message: REFUSAL });
          return { plan: (item, entity) => planEdit(ctx, item, entity) };
        },
      },
    ],
    entityTypes: [{ entityType: TOKEN_ENTITY }],
    read: async (entities) => entities.filter((e) => e.entityType !== TOKEN_ENTITY),
  };
}

/** Deleting a token entity revokes the token (no soft state, no dry run). */
export function tokenDeleter(tokens: { revoke(actor: Actor, urn: string): Promise<unknown> }): EntityDeleter {
  return {
    entityType: TOKEN_ENTITY,
    softByDefault: false,
    hardOnly: true,
    async delete(actor, urn, { dryRun }) {
      // A dry run reports what the deletion would do: nothing is revoked.
      if (!dryRun) await tokens.revoke(actor, urn);
      return { urn, entityType: TOKEN_ENTITY, mode: 'hard', dryRun, changed: true };
    },
  };
}

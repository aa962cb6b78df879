import type { Actor } from '../access/actor';
import type { JsonObject, StoredEntity } from '../../adapter/types';
import type { DomainOwners, OwnedChange } from '../entities/owner';
import { TOKEN_ASPECT, TOKEN_ENTITY } from './model';

/**
 * The tokens domain's own edits of a token record, built by `catalog.tokens` after its checks
 * (authorization, scopes) and planned by the token owner in the write path: a new record with its
 * salted hash, a revocation (refused for another actor's token without MANAGE_ACCESS_TOKENS, checked on
 * the record the unit of work reads).
 */
export type TokenEdit =
  | { kind: 'issue'; id: string; value: JsonObject; systemMetadata: JsonObject }
  | { kind: 'revoke'; id: string; caller: string; manager: boolean };

/** What the token owner asks of the tokens service. */
export interface TokenPlanner {
  planEdit(principal: Actor, urn: string, edit: TokenEdit, entity: StoredEntity | undefined): Promise<OwnedChange>;
  revoke(actor: Actor, urn: string): Promise<unknown>;
}

const REFUSAL = `${TOKEN_ASPECT} is written only by catalog.tokens.create`;

/**
 * What the tokens domain owns: the token record aspect (written only by `catalog.tokens`: its edits
 * are planned here, any other write is refused) and the token entity (deleting it revokes the token;
 * generic reads never see it).
 */
export function tokenOwners(tokens: TokenPlanner): DomainOwners {
  return {
    aspects: [
      {
        name: 'access tokens',
        governs: (_type, aspect) => aspect === TOKEN_ASPECT,
        // A generic write is refused after EDIT_ENTITY; the service authorized its own edits (for oneself, for another).
        privilege: (_type, _aspect, op) => (op === 'edit' ? undefined : 'EDIT_ENTITY'),
        async prepare(principal, items, violations) {
          for (const item of items) if (item.op !== 'edit') violations.push({ path: item.path, message: REFUSAL });
          return { plan: (item, entity) => tokens.planEdit(principal, item.urn, item.edit as TokenEdit, entity) };
        },
      },
    ],
    entityTypes: [
      {
        entityType: TOKEN_ENTITY,
        softByDefault: false,
        hardOnly: true,
        async delete(actor, urn, { dryRun }) {
          // A dry run reports what the deletion would do: nothing is revoked.
          if (!dryRun) await tokens.revoke(actor, urn);
          return { urn, entityType: TOKEN_ENTITY, mode: 'hard', dryRun, changed: true };
        },
      },
    ],
    read: async (entities) => entities.filter((e) => e.entityType !== TOKEN_ENTITY),
  };
}

import type { Actor } from '../access/actor';
import { refusingOwner, type DomainOwners } from '../entities/owner';
import { TOKEN_ASPECT, TOKEN_ENTITY } from './model';

/**
 * What the tokens domain owns: the token record aspect (written only by `catalog.tokens.create`, never
 * through a generic write) and the token entity (deleting it revokes the token; generic reads never see it).
 */
export function tokenOwners(revoke: (actor: Actor, urn: string) => Promise<unknown>): DomainOwners {
  return {
    aspects: [
      refusingOwner(
        'access tokens',
        (_type, aspect) => aspect === TOKEN_ASPECT,
        `${TOKEN_ASPECT} is written only by catalog.tokens.create`,
      ),
    ],
    entityTypes: [
      {
        entityType: TOKEN_ENTITY,
        softByDefault: false,
        hardOnly: true,
        async delete(actor, urn, { dryRun }) {
          // A dry run reports what the deletion would do: nothing is revoked.
          if (!dryRun) await revoke(actor, urn);
          return { urn, entityType: TOKEN_ENTITY, mode: 'hard', dryRun, changed: true };
        },
      },
    ],
    read: async (entities) => entities.filter((e) => e.entityType !== TOKEN_ENTITY),
  };
}

import type { StoredEntity } from '../../adapter/types';
import type { Violation } from '../../errors';
import type { Actor } from './actor';
import { POLICY_ASPECT, POLICY_ENTITY } from './authorization';
import type { Privilege } from './privileges';

/**
 * What the access domain owns: the policy aspect (written only by `catalog.policies`) and the policy
 * entity (a generic delete removes the policy; generic reads never see it). Spelled as the entity
 * service's owner contract expects it, without importing it: access sits below entities in the order
 * of the domains.
 */
export function policyOwners(remove: (actor: Actor, urn: string) => Promise<unknown>) {
  const refusal = `${POLICY_ASPECT} is written only by catalog.policies`;
  return {
    aspects: [
      {
        name: 'policies',
        governs: (_entityType: string, aspect: string) => aspect === POLICY_ASPECT,
        privilege: (): Privilege => 'MANAGE_POLICIES',
        async prepare(_principal: Actor, items: ReadonlyArray<{ path: string }>, violations: Violation[]) {
          for (const item of items) violations.push({ path: item.path, message: refusal });
          return { plan: () => undefined };
        },
      },
    ],
    entityTypes: [
      {
        entityType: POLICY_ENTITY,
        softByDefault: false,
        hardOnly: true,
        async delete(actor: Actor, urn: string, options: { dryRun: boolean }) {
          await remove(actor, urn);
          return { urn, entityType: POLICY_ENTITY, mode: 'hard' as const, dryRun: options.dryRun, changed: true };
        },
      },
    ],
    read: async (entities: StoredEntity[]) => entities.filter((e) => e.entityType !== POLICY_ENTITY),
  };
}

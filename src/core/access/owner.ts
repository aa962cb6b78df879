import type { StoredEntity } from '../../adapter/types';
import type { Violation } from '../../errors';
import type { Actor } from './actor';
import { POLICY_ASPECT, POLICY_ENTITY } from './authorization';
import { planPolicyEdit, type PolicyEdit } from './policies';
import type { Privilege } from './privileges';

/** An item as the policy owner gets it (the entity service's owned item, named structurally). */
interface PolicyItem {
  op: string;
  urn: string;
  path: string;
  edit?: unknown;
}

/**
 * What the access domain owns: the policy aspect (written only by `catalog.policies`: its edits are
 * planned here, any other write is refused) and the policy entity (a generic delete removes the policy;
 * generic reads never see it). Spelled as the entity service's owner contract expects it, without
 * importing it: access sits below entities in the order of the domains.
 */
export function policyOwners(hasEntityType: (entityType: string) => boolean) {
  const refusal = `${POLICY_ASPECT} is written only by catalog.policies`;
  return {
    aspects: [
      {
        name: 'policies',
        governs: (_entityType: string, aspect: string) => aspect === POLICY_ASPECT,
        privilege: (): Privilege => 'MANAGE_POLICIES',
        async prepare(_principal: Actor, items: readonly PolicyItem[], violations: Violation[]) {
          for (const item of items) if (item.op !== 'edit') violations.push({ path: item.path, message: refusal });
          return {
            plan: (item: PolicyItem, entity: StoredEntity | undefined) =>
              planPolicyEdit(item.urn, item.edit as PolicyEdit, entity, hasEntityType),
          };
        },
      },
    ],
    entityTypes: [{ entityType: POLICY_ENTITY }],
    read: async (entities: StoredEntity[]) => entities.filter((e) => e.entityType !== POLICY_ENTITY),
  };
}

/** Deleting a policy entity removes the policy (no soft state, no dry run). */
export function policyDeleter(policies: { remove(actor: Actor, urn: string): Promise<unknown> }) {
  return {
    entityType: POLICY_ENTITY,
    softByDefault: false,
    hardOnly: true,
    async delete(actor: Actor, urn: string, options: { dryRun: boolean }) {
      await policies.remove(actor, urn);
      return { urn, entityType: POLICY_ENTITY, mode: 'hard' as const, dryRun: options.dryRun, changed: true };
    },
  };
}

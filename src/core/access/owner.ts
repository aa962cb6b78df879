import type { JsonObject, StoredEntity } from '../../adapter/types';
import type { Violation } from '../../errors';
import type { Actor } from './actor';
import { POLICY_ASPECT, POLICY_ENTITY } from './authorization';
import type { PolicyEdit } from './policies';
import type { Privilege } from './privileges';

/** What the policy owner asks of the policies service. */
export interface PolicyPlanner {
  planEdit(urn: string, edit: PolicyEdit, stored: StoredEntity | undefined): { put?: { value: JsonObject }; delete?: boolean };
  remove(actor: Actor, urn: string): Promise<unknown>;
}

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
export function policyOwners(policies: PolicyPlanner) {
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
            plan: (item: PolicyItem, entity: StoredEntity | undefined) => policies.planEdit(item.urn, item.edit as PolicyEdit, entity),
          };
        },
      },
    ],
    entityTypes: [
      {
        entityType: POLICY_ENTITY,
        softByDefault: false,
        hardOnly: true,
        async delete(actor: Actor, urn: string, options: { dryRun: boolean }) {
          await policies.remove(actor, urn);
          return { urn, entityType: POLICY_ENTITY, mode: 'hard' as const, dryRun: options.dryRun, changed: true };
        },
      },
    ],
    read: async (entities: StoredEntity[]) => entities.filter((e) => e.entityType !== POLICY_ENTITY),
  };
}

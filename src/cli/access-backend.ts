import type { Catalog, CreatePolicyInput, PolicyList, ServiceAccount, StoredPolicy } from '../index';
import type { GmsClient } from './http-client';

/** What the policies and service-accounts commands need: one library call (embedded) or one GraphQL request (remote) each. */
export interface AccessBackend {
  createPolicy(input: CreatePolicyInput): Promise<string>;
  listPolicies(input: { start: number; count: number; query?: string }): Promise<PolicyList>;
  deletePolicy(urn: string): Promise<void>;
  createServiceAccount(input: { id: string; displayName?: string; description?: string }): Promise<ServiceAccount>;
  listServiceAccounts(): Promise<ServiceAccount[]>;
  disableServiceAccount(urn: string): Promise<ServiceAccount>;
  enableServiceAccount(urn: string): Promise<ServiceAccount>;
}

export function embeddedAccess(catalog: Catalog, actor: string): AccessBackend {
  return {
    createPolicy: async (input) => (await catalog.policies.create(actor, input)).urn,
    listPolicies: (input) => catalog.policies.list(actor, input),
    deletePolicy: async (urn) => {
      await catalog.policies.remove(actor, urn);
    },
    createServiceAccount: (input) => catalog.serviceAccounts.create(actor, input),
    listServiceAccounts: () => catalog.serviceAccounts.list(actor),
    disableServiceAccount: (urn) => catalog.serviceAccounts.disable(actor, urn),
    enableServiceAccount: (urn) => catalog.serviceAccounts.enable(actor, urn),
  };
}

const ACCOUNT_FIELDS = 'urn id displayName description disabled createdAt createdBy disabledAt';
const POLICY_FIELDS = `urn type name description state privileges editable
  resources { type resources allResources properties filter { criteria { field condition values { value } } } }
  actors { users allUsers }`;

interface GraphqlPolicy {
  urn: string;
  type: StoredPolicy['type'];
  name: string;
  description: string | null;
  state: StoredPolicy['state'];
  privileges: StoredPolicy['privileges'];
  resources: {
    type: string | null;
    resources: string[] | null;
    allResources: boolean;
    properties: string[] | null;
    filter: {
      criteria: Array<{ field: string; condition: 'EQUALS' | 'STARTS_WITH' | 'NOT_EQUALS'; values: Array<{ value: string }> }>;
    } | null;
  } | null;
  actors: { users: string[] | null; allUsers: boolean };
}

/** The platform's Policy object back in the library's shape (what `--json` prints in both modes). */
function policyOf(p: GraphqlPolicy): StoredPolicy {
  const r = p.resources;
  const resources =
    r && (r.type || r.resources || r.properties || r.filter)
      ? {
          ...(r.type ? { type: r.type } : {}),
          ...(r.resources ? { resources: r.resources } : {}),
          ...(r.filter ? { filter: { criteria: r.filter.criteria.map((c) => ({ ...c, values: c.values.map((v) => v.value) })) } } : {}),
          ...(r.properties ? { properties: r.properties } : {}),
        }
      : undefined;
  return {
    urn: p.urn,
    type: p.type,
    name: p.name,
    ...(p.description !== null ? { description: p.description } : {}),
    state: p.state,
    privileges: p.privileges,
    actors: { users: p.actors.users ?? [], allUsers: p.actors.allUsers },
    ...(resources ? { resources } : {}),
  };
}

export function remoteAccess(client: GmsClient): AccessBackend {
  return {
    async createPolicy(input) {
      const data = await client.graphql('mutation($input: PolicyUpdateInput!) { createPolicy(input: $input) }', {
        input: {
          type: input.type ?? 'PLATFORM',
          name: input.name,
          state: input.state ?? 'ACTIVE',
          ...(input.description !== undefined ? { description: input.description } : {}),
          privileges: input.privileges,
          actors: { users: input.actors.users ?? [], allUsers: input.actors.allUsers === true, resourceOwners: false, allGroups: false },
          ...(input.resources ? { resources: input.resources } : {}),
        },
      });
      return data.createPolicy as string;
    },
    async listPolicies(input) {
      const data = await client.graphql(
        `query($input: ListPoliciesInput!) { listPolicies(input: $input) { start count total policies { ${POLICY_FIELDS} } } }`,
        { input },
      );
      const list = data.listPolicies as Omit<PolicyList, 'policies'> & { policies: GraphqlPolicy[] };
      return { ...list, policies: list.policies.map(policyOf) };
    },
    async deletePolicy(urn) {
      await client.graphql('mutation($urn: String!) { deletePolicy(urn: $urn) }', { urn });
    },
    async createServiceAccount(input) {
      const data = await client.graphql(
        `mutation($input: CreateServiceAccountInput!) { createServiceAccount(input: $input) { ${ACCOUNT_FIELDS} } }`,
        {
          input,
        },
      );
      return data.createServiceAccount as ServiceAccount;
    },
    async listServiceAccounts() {
      const out: ServiceAccount[] = [];
      for (let start = 0; ; start += 1000) {
        const data = await client.graphql(
          `query($input: ListServiceAccountsInput) { listServiceAccounts(input: $input) { total serviceAccounts { ${ACCOUNT_FIELDS} } } }`,
          { input: { start, count: 1000 } },
        );
        const page = data.listServiceAccounts as { total: number; serviceAccounts: ServiceAccount[] };
        out.push(...page.serviceAccounts);
        if (out.length >= page.total || page.serviceAccounts.length === 0) return out;
      }
    },
    async disableServiceAccount(urn) {
      const data = await client.graphql(`mutation($urn: String!) { disableServiceAccount(urn: $urn) { ${ACCOUNT_FIELDS} } }`, { urn });
      return data.disableServiceAccount as ServiceAccount;
    },
    async enableServiceAccount(urn) {
      const data = await client.graphql(`mutation($urn: String!) { enableServiceAccount(urn: $urn) { ${ACCOUNT_FIELDS} } }`, { urn });
      return data.enableServiceAccount as ServiceAccount;
    },
  };
}

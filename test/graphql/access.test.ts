import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, BOB, createAdapter, createHarness, type Harness } from './support';

const STEWARD = 'urn:li:corpuser:steward';
const FIN = 'urn:li:dataset:(urn:li:dataPlatform:hive,finance.ledger,PROD)';
const MKT = 'urn:li:dataset:(urn:li:dataPlatform:hive,marketing.campaigns,PROD)';

// datahub-web-react/src/graphql/policy.graphql, less the fields of types this catalog does not model
// (user and group properties, roles, the search-result fragment of a criterion's entity).
const LIST_POLICIES = `query listPolicies($input: ListPoliciesInput!) {
  listPolicies(input: $input) {
    start count total
    policies {
      urn type name description state
      resources { type allResources resources filter { criteria { field values { value entity { urn type } } condition } } }
      privileges
      actors { users groups roles allUsers allGroups resourceOwners resourceOwnersTypesUrns resolvedUsers { username urn } resolvedGroups { urn } }
      editable
    }
  }
}`;
const GET_GRANTED = `query getGrantedPrivileges($input: GetGrantedPrivilegesInput!) { getGrantedPrivileges(input: $input) { privileges } }`;
const CREATE = `mutation createPolicy($input: PolicyUpdateInput!) { createPolicy(input: $input) }`;
const UPDATE = `mutation updatePolicy($urn: String!, $input: PolicyUpdateInput!) { updatePolicy(urn: $urn, input: $input) }`;
const DELETE = `mutation deletePolicy($urn: String!) { deletePolicy(urn: $urn) }`;
const EXPLAIN = `query($input: ExplainAccessInput!) { explainAccess(input: $input) { allowed grantedBy reason } }`;

const actors = (users: string[]) => ({ users, groups: [], resourceOwners: false, allUsers: false, allGroups: false });
const stewardPolicy = {
  type: 'METADATA',
  name: 'finance stewards',
  state: 'ACTIVE',
  description: 'finance.* on finance datasets',
  privileges: ['EDIT_ENTITY_PROPERTIES'],
  actors: actors([STEWARD]),
  resources: {
    type: 'dataset',
    allResources: false,
    filter: { criteria: [{ field: 'URN', condition: 'STARTS_WITH', values: ['urn:li:dataset:(urn:li:dataPlatform:hive,finance.'] }] },
    properties: ['finance.*'],
  },
};

describe.each(ADAPTERS)('policies over GraphQL (%s)', (kind) => {
  let h: Harness;
  afterEach(() => h.close());

  it("runs the web app's policy operations and explainAccess names the granting policy", async () => {
    h = createHarness(createAdapter(kind));
    const created = await h.run(CREATE, { input: stewardPolicy }, ADMIN);
    expect(created.errors).toBeUndefined();
    const urn = created.data!.createPolicy as string;
    expect(urn).toMatch(/^urn:li:policy:/);

    const listed = await h.run(LIST_POLICIES, { input: { start: 0, count: 20, query: 'finance' } }, ADMIN);
    expect(listed.errors).toBeUndefined();
    expect(listed.data!.listPolicies).toMatchObject({
      total: 1,
      policies: [
        {
          urn,
          type: 'METADATA',
          state: 'ACTIVE',
          resources: {
            type: 'dataset',
            allResources: false,
            filter: {
              criteria: [
                {
                  field: 'URN',
                  condition: 'STARTS_WITH',
                  values: [{ value: 'urn:li:dataset:(urn:li:dataPlatform:hive,finance.', entity: null }],
                },
              ],
            },
          },
          actors: { users: [STEWARD], resolvedUsers: [{ username: 'steward', urn: STEWARD }], allUsers: false },
          editable: true,
        },
      ],
    });
    const none = await h.run(LIST_POLICIES, { input: { orFilters: [{ and: [{ field: 'state', values: ['INACTIVE'] }] }] } }, ADMIN);
    expect((none.data!.listPolicies as { total: number }).total).toBe(0);

    const granted = await h.run(
      GET_GRANTED,
      { input: { actorUrn: STEWARD, resourceSpec: { resourceType: 'DATASET', resourceUrn: FIN } } },
      ADMIN,
    );
    // The harness grants GENERATE_PERSONAL_ACCESS_TOKENS to everyone (a static policy).
    expect(granted.data!.getGrantedPrivileges).toEqual({ privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS', 'EDIT_ENTITY_PROPERTIES'] });
    const elsewhere = await h.run(
      GET_GRANTED,
      { input: { actorUrn: STEWARD, resourceSpec: { resourceType: 'DATASET', resourceUrn: MKT } } },
      STEWARD,
    );
    expect(elsewhere.data!.getGrantedPrivileges).toEqual({ privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS'] });

    const yes = await h.run(
      EXPLAIN,
      { input: { privilege: 'EDIT_ENTITY_PROPERTIES', resourceUrn: FIN, propertyUrn: 'finance.cost' } },
      STEWARD,
    );
    expect(yes.data!.explainAccess).toEqual({ allowed: true, grantedBy: [urn], reason: expect.stringContaining(urn) });
    const no = await h.run(
      EXPLAIN,
      { input: { privilege: 'EDIT_ENTITY_PROPERTIES', resourceUrn: FIN, propertyUrn: 'pii.level' } },
      STEWARD,
    );
    expect(no.data!.explainAccess).toMatchObject({ allowed: false, grantedBy: [], reason: expect.stringContaining('pii.level') });

    // updatePolicy replaces the fields: INACTIVE grants nothing.
    const updated = await h.run(UPDATE, { urn, input: { ...stewardPolicy, state: 'INACTIVE' } }, ADMIN);
    expect(updated.data!.updatePolicy).toBe(urn);
    const inactive = await h.run(EXPLAIN, { input: { privilege: 'EDIT_ENTITY_PROPERTIES', resourceUrn: FIN } }, STEWARD);
    expect((inactive.data!.explainAccess as { allowed: boolean }).allowed).toBe(false);

    const refused = await h.run(CREATE, { input: { ...stewardPolicy, actors: { ...actors([]), groups: ['urn:li:corpGroup:x'] } } }, ADMIN);
    expect(refused.errors?.[0]?.extensions?.code).toBe('INVALID_INPUT');
    expect((await h.run(CREATE, { input: stewardPolicy }, BOB)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await h.run(DELETE, { urn }, ADMIN)).data!.deletePolicy).toBe(urn);
    expect(((await h.run(LIST_POLICIES, { input: {} }, ADMIN)).data!.listPolicies as { total: number }).total).toBe(0);
  });

  it('creates, lists and disables service accounts', async () => {
    h = createHarness(createAdapter(kind));
    const created = await h.run(
      'mutation { createServiceAccount(input: { id: "etl", displayName: "ETL" }) { urn id displayName disabled } }',
      {},
      ADMIN,
    );
    expect(created.data!.createServiceAccount).toEqual({
      urn: 'urn:li:corpuser:service_etl',
      id: 'etl',
      displayName: 'ETL',
      disabled: false,
    });
    const listed = await h.run('{ listServiceAccounts { total serviceAccounts { urn disabled } } }', {}, ADMIN);
    expect(listed.data!.listServiceAccounts).toEqual({
      total: 1,
      serviceAccounts: [{ urn: 'urn:li:corpuser:service_etl', disabled: false }],
    });
    const disabled = await h.run(
      'mutation { disableServiceAccount(urn: "urn:li:corpuser:service_etl") { disabled disabledAt } }',
      {},
      ADMIN,
    );
    expect(disabled.data!.disableServiceAccount).toMatchObject({ disabled: true });
    const refused = await h.run('{ listServiceAccounts { total } }', {}, BOB);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

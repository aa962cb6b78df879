import type { Catalog } from '../catalog';
import type { CreatePolicyInput, PolicyCriterion, PolicyResources, Privilege, StoredPolicy } from '../core/access';
import { CatalogError, type Violation } from '../errors';
import { isUrn } from '../core/urn';
import { refOf } from './entity-refs';
import type { RequestState } from './request-state';
import type { ResolverFunction } from './resolver-types';

/** The platform's `PolicyUpdateInput`. */
interface PolicyUpdateInput {
  type: 'METADATA' | 'PLATFORM';
  name: string;
  state: 'ACTIVE' | 'INACTIVE';
  description?: string | null;
  resources?: {
    type?: string | null;
    resources?: string[] | null;
    allResources?: boolean | null;
    filter?: { criteria?: Array<{ field: string; values: string[]; condition?: PolicyCriterion['condition'] | null }> | null } | null;
    properties?: string[] | null;
  } | null;
  privileges: string[];
  actors: {
    users?: string[] | null;
    groups?: string[] | null;
    roles?: string[] | null;
    resourceOwners: boolean;
    resourceOwnersTypes?: string[] | null;
    allUsers: boolean;
    allGroups: boolean;
  };
}

/** The platform's input in the library's terms; groups, roles and resource owners are not modelled (refused when given). */
function decodePolicyInput(input: PolicyUpdateInput): CreatePolicyInput {
  const violations: Violation[] = [];
  const a = input.actors;
  if (a.groups?.length) violations.push({ path: '/actors/groups', message: 'groups are not modelled by this catalog: name users' });
  if (a.roles?.length) violations.push({ path: '/actors/roles', message: 'roles are not modelled by this catalog: name users' });
  if (a.allGroups) violations.push({ path: '/actors/allGroups', message: 'groups are not modelled by this catalog: use allUsers' });
  if (a.resourceOwners || a.resourceOwnersTypes?.length)
    violations.push({ path: '/actors/resourceOwners', message: 'resource owners are not modelled by this catalog: name users' });
  if (violations.length) throw new CatalogError('INVALID_INPUT', `invalid policy: ${violations[0]!.message}`, { details: violations });
  const r = input.resources;
  let resources: PolicyResources | undefined;
  if (r) {
    resources = {};
    if (r.type) resources.type = r.type;
    if (r.resources?.length) resources.resources = r.resources;
    if (r.allResources) resources.allResources = true;
    if (r.filter?.criteria?.length)
      resources.filter = {
        criteria: r.filter.criteria.map((c) => ({ field: c.field, values: c.values, condition: c.condition ?? 'EQUALS' })),
      };
    if (r.properties) resources.properties = r.properties;
  }
  return {
    type: input.type,
    name: input.name,
    state: input.state,
    ...(input.description !== undefined ? { description: input.description } : {}),
    privileges: input.privileges as Privilege[],
    actors: { users: a.users ?? [], allUsers: a.allUsers },
    ...(resources ? { resources } : {}),
  };
}

/** The platform's `Policy` object. */
function encodePolicy(policy: StoredPolicy) {
  const r = policy.resources;
  return {
    ...policy,
    description: policy.description ?? null,
    editable: true,
    resources: {
      type: r?.type ?? null,
      resources: r?.resources ?? null,
      allResources: !r || r.allResources === true || (!r.type && !r.resources && !r.filter?.criteria.length),
      filter: r?.filter
        ? {
            criteria: r.filter.criteria.map((c) => ({
              field: c.field,
              condition: c.condition,
              values: c.values.map((value) => ({ value, entity: isUrn(value) ? refOf(value) : null })),
            })),
          }
        : null,
      properties: r?.properties ?? null,
    },
    actors: {
      users: policy.actors.users,
      groups: [],
      roles: [],
      allUsers: policy.actors.allUsers,
      allGroups: false,
      resourceOwners: false,
      resourceOwnersTypesUrns: [],
      resolvedUsers: policy.actors.users.filter(isUrn).map(refOf),
      resolvedGroups: [],
    },
  };
}

/** Policies, explanations and service accounts: each operation is one call of the catalog. */
export function accessResolvers(
  catalog: Catalog,
  stateOf: (context: unknown) => RequestState,
): Record<string, Record<string, ResolverFunction>> {
  return {
    Query: {
      listPolicies: async (_p: unknown, args: { input: Parameters<Catalog['policies']['list']>[1] }, context: unknown) => {
        const list = await catalog.policies.list(stateOf(context).actor, args.input);
        return { ...list, policies: list.policies.map(encodePolicy) };
      },
      getGrantedPrivileges: (
        _p: unknown,
        args: { input: { actorUrn: string; resourceSpec?: { resourceType: string; resourceUrn: string } | null } },
        context: unknown,
      ) =>
        catalog.access.grantedPrivileges(stateOf(context).actor, {
          actorUrn: args.input.actorUrn,
          ...(args.input.resourceSpec ? { resourceSpec: { resourceUrn: args.input.resourceSpec.resourceUrn } } : {}),
        }),
      explainAccess: (_p: unknown, args: { input: Parameters<Catalog['access']['explain']>[1] }, context: unknown) =>
        catalog.access.explain(stateOf(context).actor, args.input),
      listServiceAccounts: async (
        _p: unknown,
        args: { input?: { start?: number | null; count?: number | null } | null },
        context: unknown,
      ) => {
        const all = await catalog.serviceAccounts.list(stateOf(context).actor);
        const start = Math.max(0, args.input?.start ?? 0);
        const page = all.slice(start, start + Math.max(0, Math.min(args.input?.count ?? 20, 1000)));
        return { start, count: page.length, total: all.length, serviceAccounts: page };
      },
    },
    Mutation: {
      createPolicy: async (_p: unknown, args: { input: PolicyUpdateInput }, context: unknown) =>
        (await catalog.policies.create(stateOf(context).actor, decodePolicyInput(args.input))).urn,
      updatePolicy: async (_p: unknown, args: { urn: string; input: PolicyUpdateInput }, context: unknown) => {
        const { resources, description, type, name, state, privileges, actors } = decodePolicyInput(args.input);
        await catalog.policies.update(stateOf(context).actor, args.urn, {
          type: type ?? 'PLATFORM',
          name,
          ...(state ? { state } : {}),
          privileges,
          actors,
          resources: resources ?? null,
          description: description ?? null,
        });
        return args.urn;
      },
      deletePolicy: async (_p: unknown, args: { urn: string }, context: unknown) => {
        await catalog.policies.remove(stateOf(context).actor, args.urn);
        return args.urn;
      },
      createServiceAccount: (_p: unknown, args: { input: Parameters<Catalog['serviceAccounts']['create']>[1] }, context: unknown) =>
        catalog.serviceAccounts.create(stateOf(context).actor, args.input),
      disableServiceAccount: (_p: unknown, args: { urn: string }, context: unknown) =>
        catalog.serviceAccounts.disable(stateOf(context).actor, args.urn),
      enableServiceAccount: (_p: unknown, args: { urn: string }, context: unknown) =>
        catalog.serviceAccounts.enable(stateOf(context).actor, args.urn),
      removeServiceAccount: (_p: unknown, args: { urn: string }, context: unknown) =>
        catalog.serviceAccounts.remove(stateOf(context).actor, args.urn),
    },
  };
}

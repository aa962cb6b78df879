import type { Actor } from './actor';
import { randomUUID } from 'node:crypto';
import type { JsonObject, StoredEntity } from '../../adapter/types';
import { POLICY_ASPECT, POLICY_ENTITY, POLICY_SCAN, type StoredPolicy } from './authorization';
import { scanPages } from '../../adapter/scan-pages';
import type { CatalogContext } from '../context';
import { lazySchemaCheck } from '../validation';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import type { Privilege } from './privileges';
import { checkNotBlank, createPolicySchema, updatePolicySchema } from '../validation/schemas/access';
import { checkUrn, entityTypeOf, urnProblem } from '../urn';
import { checkResources, normalizeResources, type PolicyResources, type PolicyType } from './policy-model';

export type PolicyState = StoredPolicy['state'];

/**
 * The policies' own edits, built by `catalog.policies` after its checks and planned by the policy owner
 * in the write path: a create (refused when the policy exists), an update (its result is the policy as
 * written), a removal (NOT_FOUND when absent).
 */
export type PolicyEdit = { kind: 'create'; policy: StoredPolicy } | { kind: 'update'; input: UpdatePolicyInput } | { kind: 'remove' };

/** An actor the write path admitted (authenticated, MANAGE_POLICIES checked), as the policies name it. */
export interface PolicyAdmission {
  readonly principal: Actor;
  readonly who: string;
  readonly granted: ReadonlySet<Privilege>;
  readonly perResource: ReadonlySet<Privilege>;
}

/**
 * The one write path as the policies reach it: the access domain sits below the entities domain that
 * holds it, so it names only what it uses (the write pipeline is one).
 */
export interface PolicyWritePath {
  admit(actor: unknown, privileges: readonly Privilege[]): Promise<PolicyAdmission>;
  write(
    actor: PolicyAdmission,
    items: ReadonlyArray<{ op: 'edit'; urn: string; aspect: string; edit: PolicyEdit; path: string }>,
    options: { message: string },
  ): Promise<{ results: unknown[] }>;
}

/** Who a policy grants to: listed users, or every authenticated actor. */
export interface PolicyActorsInput {
  users?: readonly string[] | null;
  allUsers?: boolean | null;
}

export interface CreatePolicyInput {
  /** Key of `urn:li:policy:<id>`; default a random UUID. */
  id?: string;
  /** Default PLATFORM (everywhere); METADATA with `resources` grants where they say. */
  type?: PolicyType | null;
  name: string;
  description?: string | null;
  /** Default ACTIVE. */
  state?: PolicyState;
  privileges: readonly Privilege[];
  actors: PolicyActorsInput;
  /** Which entities (and, for EDIT_ENTITY_PROPERTIES, which properties) it covers; absent: every resource. */
  resources?: PolicyResources | null;
}

/** Fields to change; `actors` and `resources`, when given, replace the old ones as a whole (`resources: null` removes them). */
export interface UpdatePolicyInput {
  type?: PolicyType;
  resources?: PolicyResources | null;
  name?: string;
  description?: string | null;
  state?: PolicyState;
  privileges?: readonly Privilege[];
  actors?: PolicyActorsInput;
}

export interface ListPoliciesInput {
  start?: number | null;
  count?: number | null;
  query?: string | null;
  /** The platform's filter shape: any AND group holds; each condition on `type` or `state`, its values any of. */
  orFilters?: ReadonlyArray<{
    and?: ReadonlyArray<{ field: string; value?: string | null; values?: readonly string[] | null; negated?: boolean | null }> | null;
  }> | null;
}

export interface PolicyList {
  start: number;
  count: number;
  total: number;
  policies: StoredPolicy[];
}

/** `catalog.policies`: stored grants, on top of the static `superUsers` and `policies` options. */
export interface Policies {
  create(actor: Actor, input: CreatePolicyInput): Promise<StoredPolicy>;
  update(actor: Actor, urn: string, input: UpdatePolicyInput): Promise<StoredPolicy>;
  /** Deletes a policy; `NOT_FOUND` when there is none. */
  remove(actor: Actor, urn: string): Promise<true>;
  /** By name, then URN; `query`: a case-insensitive part of the name or description; `orFilters`: on `type` and `state`. */
  list(actor: Actor, input?: ListPoliciesInput): Promise<PolicyList>;
  get(actor: Actor, urn: string): Promise<StoredPolicy | undefined>;
}

const checkCreateShape = lazySchemaCheck(createPolicySchema);
const checkUpdateShape = lazySchemaCheck(updatePolicySchema);
const MAX_PAGE = 1000;

function toPolicy(entity: StoredEntity): StoredPolicy | undefined {
  const value = entity.aspects[POLICY_ASPECT]?.value;
  if (!value) return undefined;
  const actors = (value.actors ?? {}) as JsonObject;
  return {
    urn: entity.urn,
    type: value.type === 'METADATA' ? 'METADATA' : 'PLATFORM',
    name: String(value.name ?? ''),
    ...(typeof value.description === 'string' ? { description: value.description } : {}),
    state: value.state === 'INACTIVE' ? 'INACTIVE' : 'ACTIVE',
    privileges: (Array.isArray(value.privileges) ? value.privileges : []) as Privilege[],
    actors: { users: (Array.isArray(actors.users) ? actors.users : []) as string[], allUsers: actors.allUsers === true },
    ...(value.resources && typeof value.resources === 'object' ? { resources: value.resources as unknown as PolicyResources } : {}),
  };
}

/** The aspect value: the shape the Authorizer reads on every check. */
function toAspectValue(policy: StoredPolicy): JsonObject {
  return {
    type: policy.type,
    name: policy.name,
    ...(policy.description !== undefined ? { description: policy.description } : {}),
    state: policy.state,
    privileges: [...policy.privileges],
    actors: { users: [...policy.actors.users], allUsers: policy.actors.allUsers },
    ...(policy.resources ? { resources: policy.resources as unknown as JsonObject } : {}),
  };
}

function checkUsers(actors: PolicyActorsInput | undefined, violations: Violation[]): void {
  (actors?.users ?? []).forEach((user, i) => checkUrn(user, `/actors/users/${i}`, violations));
}

function policyUrnOf(urn: unknown): string {
  const problem = urnProblem(urn) ?? (entityTypeOf(urn as string) === POLICY_ENTITY ? undefined : `"${String(urn)}" is not a policy URN`);
  if (problem) throw new CatalogError('INVALID_INPUT', `urn: ${problem}`, { details: [{ path: 'urn', message: problem }] });
  return urn as string;
}

/**
 * Stored policies (`policyInfo` of `urn:li:policy:<id>`), managed with MANAGE_POLICIES. The
 * Authorizer reads them on every check, so a change takes effect on the next call.
 */
export class PolicyService implements Policies {
  constructor(
    private readonly ctx: CatalogContext,
    /** The one write path (built by createCatalog with the policy owner). */
    private readonly writePath: PolicyWritePath,
  ) {}

  /** One edit of one policy through the write path (the policy owner plans it with `planPolicyEdit`); the owner's result. */
  private async writeEdit(admitted: PolicyAdmission, urn: string, edit: PolicyEdit): Promise<unknown> {
    const { results } = await this.writePath.write(admitted, [{ op: 'edit', urn, aspect: POLICY_ASPECT, edit, path: '' }], {
      message: `invalid write of ${urn}`,
    });
    return results[0];
  }

  async create(actor: Actor, input: CreatePolicyInput): Promise<StoredPolicy> {
    const admitted = await this.writePath.admit(actor, ['MANAGE_POLICIES']);
    const violations: Violation[] = [];
    if (typeof input === 'object' && input !== null) checkNotBlank(input.name, '/name', violations);
    const shape = checkCreateShape(input);
    if (shape.length) violations.push(...shape);
    else {
      checkUsers(input.actors, violations);
      checkResources(
        input.type ?? 'PLATFORM',
        input.resources ?? undefined,
        input.privileges,
        (t) => this.ctx.registry.hasEntityType(t),
        violations,
      );
    }
    throwIfViolations(violations, 'invalid policy');
    const urn = `urn:li:${POLICY_ENTITY}:${input.id ?? randomUUID()}`;
    const resources = normalizeResources(input.resources);
    const policy: StoredPolicy = {
      urn,
      type: input.type ?? 'PLATFORM',
      ...(resources ? { resources } : {}),
      name: input.name,
      ...(typeof input.description === 'string' ? { description: input.description } : {}),
      state: input.state ?? 'ACTIVE',
      privileges: [...input.privileges],
      actors: { users: [...new Set(input.actors.users ?? [])], allUsers: input.actors.allUsers === true },
    };
    await this.writeEdit(admitted, urn, { kind: 'create', policy });
    return policy;
  }

  async update(actor: Actor, urn: string, input: UpdatePolicyInput): Promise<StoredPolicy> {
    const admitted = await this.writePath.admit(actor, ['MANAGE_POLICIES']);
    const policyUrn = policyUrnOf(urn);
    const violations: Violation[] = [];
    if (typeof input === 'object' && input !== null) checkNotBlank(input.name, '/name', violations);
    const shape = checkUpdateShape(input);
    if (shape.length) violations.push(...shape);
    else checkUsers(input.actors, violations);
    throwIfViolations(violations, 'invalid policy update');
    return (await this.writeEdit(admitted, policyUrn, { kind: 'update', input })) as StoredPolicy;
  }

  async remove(actor: Actor, urn: string): Promise<true> {
    const admitted = await this.writePath.admit(actor, ['MANAGE_POLICIES']);
    const policyUrn = policyUrnOf(urn);
    await this.writeEdit(admitted, policyUrn, { kind: 'remove' });
    return true;
  }

  async list(actor: Actor, input: ListPoliciesInput = {}): Promise<PolicyList> {
    await this.authorize(actor);
    const start = input?.start ?? 0;
    const count = input?.count ?? 20;
    const violations: Violation[] = [];
    if (!Number.isInteger(start) || start < 0) violations.push({ path: '/start', message: 'must be an integer >= 0' });
    if (!Number.isInteger(count) || count < 0 || count > MAX_PAGE)
      violations.push({ path: '/count', message: `must be an integer from 0 to ${MAX_PAGE}` });
    const query = typeof input?.query === 'string' && input.query.trim() !== '*' ? input.query.trim().toLowerCase() : '';
    const groups = (input?.orFilters ?? []).map((group, i) =>
      (group?.and ?? []).map((condition, j) => {
        const path = `/orFilters/${i}/and/${j}`;
        if (condition.field !== 'type' && condition.field !== 'state')
          violations.push({ path: `${path}/field`, message: `policies are filtered on type or state, not "${condition.field}"` });
        const values = condition.values ?? (condition.value !== undefined && condition.value !== null ? [condition.value] : []);
        return { field: condition.field as 'type' | 'state', values, negated: condition.negated === true };
      }),
    );
    throwIfViolations(violations, 'invalid policy listing');
    const all = (await this.scanAll()).filter(
      (p) =>
        (!query || p.name.toLowerCase().includes(query) || (p.description ?? '').toLowerCase().includes(query)) &&
        (!groups.length || groups.some((and) => and.every((c) => c.values.includes(p[c.field]) !== c.negated))),
    );
    all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
    const policies = all.slice(start, start + count);
    return { start, count: policies.length, total: all.length, policies };
  }

  async get(actor: Actor, urn: string): Promise<StoredPolicy | undefined> {
    await this.authorize(actor);
    const policyUrn = policyUrnOf(urn);
    const [entity] = await this.ctx.adapter.readEntities([policyUrn], [POLICY_ASPECT]);
    return entity ? toPolicy(entity) : undefined;
  }

  private async scanAll(): Promise<StoredPolicy[]> {
    const out: StoredPolicy[] = [];
    for await (const page of scanPages(this.ctx.adapter, POLICY_SCAN, 500)) {
      for (const entity of page) {
        const policy = toPolicy(entity);
        if (policy) out.push(policy);
      }
    }
    return out;
  }

  private async authorize(actor: Actor): Promise<string> {
    const caller = await this.ctx.authenticate(actor);
    await this.ctx.authorizer.require(actor, 'MANAGE_POLICIES');
    return caller;
  }
}

/** The policy owner's plan of an edit, on the policy as the unit of work reads it (an update answers the policy as written). */
export function planPolicyEdit(
  urn: string,
  edit: PolicyEdit,
  stored: StoredEntity | undefined,
  hasEntityType: (entityType: string) => boolean,
): { put?: { value: JsonObject }; delete?: boolean; result?: StoredPolicy } {
  if (edit.kind === 'create') {
    if (stored) throw new CatalogError('CONFLICT', `policy ${urn} exists already`);
    return { put: { value: toAspectValue(edit.policy) } };
  }
  if (edit.kind === 'remove') {
    if (!stored) throw new CatalogError('NOT_FOUND', `no policy ${urn}`);
    return { delete: true };
  }
  const existing = stored && toPolicy(stored);
  if (!existing) throw new CatalogError('NOT_FOUND', `no policy ${urn}`);
  const { input } = edit;
  const { description: _previous, ...rest } = existing;
  const description = input.description === undefined ? existing.description : (input.description ?? undefined);
  const { resources: _oldResources, ...kept } = rest;
  const resources = input.resources === undefined ? existing.resources : normalizeResources(input.resources);
  const updated: StoredPolicy = {
    ...kept,
    type: input.type ?? existing.type,
    ...(resources ? { resources } : {}),
    ...(description !== undefined ? { description } : {}),
    name: input.name ?? existing.name,
    state: input.state ?? existing.state,
    privileges: input.privileges ? [...input.privileges] : existing.privileges,
    actors: input.actors ? { users: [...new Set(input.actors.users ?? [])], allUsers: input.actors.allUsers === true } : existing.actors,
  };
  const violations: Violation[] = [];
  checkResources(updated.type, updated.resources, updated.privileges, hasEntityType, violations);
  throwIfViolations(violations, 'invalid policy update');
  return { put: { value: toAspectValue(updated) }, result: updated };
}

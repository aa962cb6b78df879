import { actorUrn, isScopedActor, type Actor } from './actor';
import type { StorageAdapter, StoredEntity } from '../../adapter/types';
import { CatalogError } from '../../errors';
import { isPrivilege, PRIVILEGE_DESCRIPTIONS, PRIVILEGES, type Privilege } from './privileges';
import { entityTypeOf, knownUrnProblem, urnProblem } from '../urn';
import { AccessState, type ActorGrants } from './access-state';
import { ItemAccess } from './item-access';
import type { PolicyResources, PolicyType } from './policy-model';

/** A static grant passed to `createCatalog({ policies })`. */
export interface StaticPolicy {
  name?: string;
  actors: readonly string[] | '*';
  privileges: readonly Privilege[];
}

/** A policy as stored through the API (the `policyInfo` aspect of `urn:li:policy:<id>`). */
export interface StoredPolicy {
  urn: string;
  /** PLATFORM: everywhere; METADATA: where its resources say (everywhere when it names none). */
  type: PolicyType;
  name: string;
  description?: string;
  state: 'ACTIVE' | 'INACTIVE';
  privileges: Privilege[];
  actors: { users: string[]; allUsers: boolean };
  /** The resources it covers (absent: every resource). */
  resources?: PolicyResources;
}

export const POLICY_ENTITY = 'policy';
export const POLICY_ASPECT = 'policyInfo';
/** Every stored policy with its record aspect. */
export const POLICY_SCAN = { entityType: POLICY_ENTITY, requireAspect: POLICY_ASPECT, aspectNames: [POLICY_ASPECT] } as const;

/**
 * The one authorization check every domain operation uses. Grants come from `superUsers`, the static
 * `policies` option and the ACTIVE stored policies. Stored policies are compiled once per change
 * (`AccessState`: the change feed says when, also for changes made by other processes sharing the
 * store), so a change takes effect on the next call.
 *
 * A policy without resources grants its privileges everywhere. A METADATA policy with resources grants
 * them where it covers: `has` and `require` (no resource) answer whether the actor holds the privilege
 * somewhere; the write path then checks each item (`authorizeBatch`, `ItemAccess`).
 */
export class Authorizer {
  private readonly superUsers: ReadonlySet<string>;
  readonly state: AccessState;

  constructor(
    private readonly adapter: StorageAdapter,
    superUsers: readonly string[],
    staticPolicies: readonly StaticPolicy[],
    /** Whether commits record change events (without them the records are read on every check). */
    changeEvents: () => boolean = () => true,
  ) {
    for (const [i, urn] of superUsers.entries()) {
      const problem = urnProblem(urn);
      if (problem) throw new CatalogError('INVALID_INPUT', `superUsers[${i}]: ${problem}`);
    }
    for (const [i, policy] of staticPolicies.entries()) {
      for (const privilege of policy.privileges) {
        if (!isPrivilege(privilege)) {
          throw new CatalogError(
            'INVALID_INPUT',
            `policies[${i}].privileges: unknown privilege "${String(privilege)}"; known: ${PRIVILEGES.join(', ')}`,
          );
        }
      }
    }
    this.superUsers = new Set(superUsers);
    this.state = new AccessState(adapter, staticPolicies, changeEvents);
  }

  isSuperUser(actor: string): boolean {
    return this.superUsers.has(actor);
  }

  /** Whether the actor is a service account that is disabled now (it holds no privilege, its tokens fail). */
  async isDisabled(actor: string): Promise<boolean> {
    return (await this.state.current()).disabledAccounts.has(actor);
  }

  /** Every privilege the actor holds now, somewhere (for a scoped actor: those of its scopes the user holds). */
  async privilegesOf(actor: Actor): Promise<Set<Privilege>> {
    const held = await this.userPrivileges(actorUrn(actor));
    if (!isScopedActor(actor)) return held;
    return new Set([...held].filter((p) => actor.scopes.includes(p)));
  }

  private async userPrivileges(actor: string): Promise<Set<Privilege>> {
    if (this.superUsers.has(actor)) return new Set(PRIVILEGES);
    const grants = (await this.state.current()).grantsOf(actor);
    const held = new Set<Privilege>(grants.everywhere.keys());
    for (const policy of grants.scoped) for (const p of policy.privileges) held.add(p);
    return held;
  }

  /** Whether the actor holds the privilege (somewhere: a policy with resources counts). */
  async has(subject: Actor, privilege: Privilege): Promise<boolean> {
    if (isScopedActor(subject) && !subject.scopes.includes(privilege)) return false;
    const actor = actorUrn(subject);
    if (this.superUsers.has(actor)) return true;
    const grants = (await this.state.current()).grantsOf(actor);
    return grants.everywhere.has(privilege) || grants.scoped.some((p) => p.privileges.has(privilege));
  }

  /** FORBIDDEN, naming the missing privilege, unless the actor holds it (and, for a scoped actor, its scopes include it). */
  async require(actor: Actor, privilege: Privilege, action?: string): Promise<void> {
    if (await this.has(actor, privilege)) return;
    throw this.refusal(actor, privilege, action);
  }

  private refusal(actor: Actor, privilege: Privilege, action?: string): CatalogError {
    const what = action ?? PRIVILEGE_DESCRIPTIONS[privilege];
    if (isScopedActor(actor) && !actor.scopes.includes(privilege)) {
      return new CatalogError(
        'FORBIDDEN',
        `the access token of ${actor.urn} is scoped to ${actor.scopes.join(', ') || 'nothing'}: it lacks the ${privilege} privilege, needed to ${what}`,
        { reason: privilege },
      );
    }
    return new CatalogError('FORBIDDEN', `${actorUrn(actor)} lacks the ${privilege} privilege, needed to ${what}`, { reason: privilege });
  }

  /**
   * The write path's check of a batch that needs these privileges: FORBIDDEN when the actor holds one
   * nowhere; undefined when it holds each everywhere (nothing more to check); else the per-item check
   * the unit of work runs on what it read (`ItemAccess`).
   */
  async authorizeBatch(actor: Actor, needs: Iterable<Privilege>): Promise<ItemAccess | undefined> {
    const urn = actorUrn(actor);
    const superUser = this.superUsers.has(urn);
    let grants: ActorGrants | undefined;
    let scoped: Privilege[] | undefined;
    for (const privilege of needs) {
      if (isScopedActor(actor) && !actor.scopes.includes(privilege)) throw this.refusal(actor, privilege);
      if (superUser) continue;
      grants ??= (await this.state.current()).grantsOf(urn);
      if (grants.everywhere.has(privilege)) continue;
      if (!grants.scoped.some((p) => p.privileges.has(privilege))) throw this.refusal(actor, privilege);
      (scoped ??= []).push(privilege);
    }
    if (!scoped || !grants) return undefined;
    return new ItemAccess(this.adapter, urn, grants, scoped);
  }

  /**
   * For writes outside the write path (timeseries rows appended by `catalog.timeseries`): FORBIDDEN
   * unless the actor holds the privilege on each entity (read once, only when a criterion reads stored values).
   */
  async requireOnEntities(actor: Actor, privilege: Privilege, entities: ReadonlyArray<{ urn: string; path: string }>): Promise<void> {
    const access = await this.authorizeBatch(actor, [privilege]);
    if (!access) return;
    const urns = [...new Set(entities.map((e) => e.urn))];
    const read = new Map<string, StoredEntity>();
    if (access.needsStoredValues) for (const e of await this.adapter.readEntities(urns, ['structuredProperties'])) read.set(e.urn, e);
    await access.begin(read, urns);
    const checked = new Set<string>();
    for (const { urn, path } of entities) {
      if (checked.has(urn)) continue;
      checked.add(urn);
      access.check({ urn, entityType: entityTypeOf(urn), path }, privilege, read.get(urn));
    }
    access.throwIfRefused();
  }
}

/** UNAUTHENTICATED unless the actor is a valid URN, or a scoped actor with one (transports set it from a verified token); its URN. */
export function requireActor(subject: unknown): string {
  const actor = isScopedActor(subject) ? subject.urn : subject;
  if (actor === undefined || actor === null || actor === '') {
    throw new CatalogError('UNAUTHENTICATED', 'no authenticated actor: send a valid access token', { reason: 'missing' });
  }
  const problem = knownUrnProblem(actor);
  if (problem) throw new CatalogError('UNAUTHENTICATED', `the actor is not a valid URN: ${problem}`, { reason: 'malformed' });
  return actor as string;
}

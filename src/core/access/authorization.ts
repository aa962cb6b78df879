import { actorUrn, isScopedActor, type Actor } from './actor';
import type { StorageAdapter } from '../../adapter/types';
import { scanPages } from '../../adapter/scan-pages';
import { CatalogError } from '../../errors';
import { isPrivilege, PRIVILEGE_DESCRIPTIONS, PRIVILEGES, type Privilege } from './privileges';
import { knownUrnProblem, urnProblem } from '../urn';

/** A static grant passed to `createCatalog({ policies })`. */
export interface StaticPolicy {
  name?: string;
  actors: readonly string[] | '*';
  privileges: readonly Privilege[];
}

/** A policy as stored through the API (the `policyInfo` aspect of `urn:li:policy:<id>`). */
export interface StoredPolicy {
  urn: string;
  name: string;
  description?: string;
  state: 'ACTIVE' | 'INACTIVE';
  privileges: Privilege[];
  actors: { users: string[]; allUsers: boolean };
}

export const POLICY_ENTITY = 'policy';
export const POLICY_ASPECT = 'policyInfo';
/** Every stored policy with its record aspect. */
export const POLICY_SCAN = { entityType: POLICY_ENTITY, requireAspect: POLICY_ASPECT, aspectNames: [POLICY_ASPECT] } as const;

/**
 * The one authorization check every domain operation uses. Grants come from `superUsers`, the static
 * `policies` option and the ACTIVE stored policies, which are read on every check so that a change
 * takes effect on the next call (also across processes sharing a database).
 */
export class Authorizer {
  private readonly superUsers: ReadonlySet<string>;

  constructor(
    private readonly adapter: StorageAdapter,
    superUsers: readonly string[],
    private readonly staticPolicies: readonly StaticPolicy[],
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
  }

  isSuperUser(actor: string): boolean {
    return this.superUsers.has(actor);
  }

  /** Every privilege the actor holds now (for a scoped actor: those of its scopes the user holds). */
  async privilegesOf(actor: Actor): Promise<Set<Privilege>> {
    const held = await this.userPrivileges(actorUrn(actor));
    if (!isScopedActor(actor)) return held;
    return new Set([...held].filter((p) => actor.scopes.includes(p)));
  }

  private async userPrivileges(actor: string): Promise<Set<Privilege>> {
    if (this.superUsers.has(actor)) return new Set(PRIVILEGES);
    const held = new Set<Privilege>();
    for (const policy of this.staticPolicies) {
      if (policy.actors === '*' || policy.actors.includes(actor)) for (const p of policy.privileges) held.add(p);
    }
    for (const policy of await this.storedPolicies()) {
      if (policy.state !== 'ACTIVE') continue;
      if (policy.actors.allUsers || policy.actors.users.includes(actor)) for (const p of policy.privileges) held.add(p);
    }
    return held;
  }

  async has(subject: Actor, privilege: Privilege): Promise<boolean> {
    if (isScopedActor(subject) && !subject.scopes.includes(privilege)) return false;
    const actor = actorUrn(subject);
    if (this.superUsers.has(actor)) return true;
    for (const policy of this.staticPolicies) {
      if ((policy.actors === '*' || policy.actors.includes(actor)) && policy.privileges.includes(privilege)) return true;
    }
    return (await this.userPrivileges(actor)).has(privilege);
  }

  /** FORBIDDEN, naming the missing privilege, unless the actor holds it (and, for a scoped actor, its scopes include it). */
  async require(actor: Actor, privilege: Privilege, action?: string): Promise<void> {
    if (await this.has(actor, privilege)) return;
    const what = action ?? PRIVILEGE_DESCRIPTIONS[privilege];
    if (isScopedActor(actor) && !actor.scopes.includes(privilege)) {
      throw new CatalogError(
        'FORBIDDEN',
        `the access token of ${actor.urn} is scoped to ${actor.scopes.join(', ') || 'nothing'}: it lacks the ${privilege} privilege, needed to ${what}`,
        {
          reason: privilege,
        },
      );
    }
    throw new CatalogError('FORBIDDEN', `${actorUrn(actor)} lacks the ${privilege} privilege, needed to ${what}`, { reason: privilege });
  }

  /** Stored policies, read fresh (a policy change takes effect on the next call). */
  async storedPolicies(): Promise<StoredPolicy[]> {
    const out: StoredPolicy[] = [];
    for await (const page of scanPages(this.adapter, POLICY_SCAN, 500)) {
      for (const entity of page) {
        const value = entity.aspects[POLICY_ASPECT]?.value;
        if (value) out.push({ ...(value as unknown as Omit<StoredPolicy, 'urn'>), urn: entity.urn });
      }
    }
    return out;
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

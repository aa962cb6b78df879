import type { StoredEntity } from '../../adapter/types';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import type { CatalogContext } from '../context';
import { checkUrn, entityTypeOf } from '../urn';
import { actorUrn, isScopedActor, type Actor } from './actor';
import { parentOfField, type CompiledPolicy, type ResourceView } from './compiled-policies';
import { policyCovers } from './item-access';
import { PROPERTY_URN_PREFIX, qualifiedNameOf } from './policy-model';
import { isPrivilege, PRIVILEGES, type Privilege } from './privileges';

export interface ExplainAccessInput {
  privilege: Privilege;
  /** The entity the privilege would be used on (left out: anywhere). */
  resourceUrn?: string | null;
  /** For EDIT_ENTITY_PROPERTIES: the structured property set or removed (URN or qualified name). */
  propertyUrn?: string | null;
}

/** Whether the actor holds the privilege there, which grants give it, and in words why (not). */
export interface AccessExplanation {
  allowed: boolean;
  /** Policy URNs, or `superUsers` / `options` (the static grants of createCatalog). */
  grantedBy: string[];
  reason: string;
}

export interface GrantedPrivilegesInput {
  actorUrn: string;
  resourceSpec?: { resourceType?: string | null; resourceUrn?: string | null } | null;
}

/** `catalog.access`: why an actor may or may not do something, and what it may do on a resource. */
export interface Access {
  /** Explains the caller's own access, or another actor's (`actorUrn`) with MANAGE_POLICIES. */
  explain(actor: Actor, input: ExplainAccessInput & { actorUrn?: string | null }): Promise<AccessExplanation>;
  /** The privileges an actor holds on a resource (or everywhere); another actor's need MANAGE_POLICIES. */
  grantedPrivileges(actor: Actor, input: GrantedPrivilegesInput): Promise<{ privileges: Privilege[] }>;
}

function describePolicy(p: CompiledPolicy): string {
  return p.source === 'options' ? 'the static policies option' : `policy ${p.source} ("${p.name}")`;
}

export class AccessService implements Access {
  constructor(private readonly ctx: CatalogContext) {}

  async explain(actor: Actor, input: ExplainAccessInput & { actorUrn?: string | null }): Promise<AccessExplanation> {
    const caller = await this.ctx.authenticate(actor);
    const violations: Violation[] = [];
    if (typeof input !== 'object' || input === null) throw new CatalogError('INVALID_INPUT', 'input must be an object');
    if (!isPrivilege(input.privilege))
      violations.push({ path: '/privilege', message: `unknown privilege "${String(input.privilege)}"; known: ${PRIVILEGES.join(', ')}` });
    if (input.resourceUrn !== undefined && input.resourceUrn !== null) checkUrn(input.resourceUrn, '/resourceUrn', violations);
    if (input.actorUrn !== undefined && input.actorUrn !== null) checkUrn(input.actorUrn, '/actorUrn', violations, 'corpuser');
    const property = input.propertyUrn ? `${PROPERTY_URN_PREFIX}${qualifiedNameOf(input.propertyUrn)}` : undefined;
    if (property) checkUrn(property, '/propertyUrn', violations);
    throwIfViolations(violations, 'invalid access question');
    const subject = input.actorUrn ?? caller;
    if (subject !== caller) await this.ctx.authorizer.require(actor, 'MANAGE_POLICIES', "explain another actor's access");
    const who: Actor = subject === caller ? actor : subject;
    return this.decide(who, input.privilege, input.resourceUrn ?? undefined, property);
  }

  async grantedPrivileges(actor: Actor, input: GrantedPrivilegesInput): Promise<{ privileges: Privilege[] }> {
    const caller = await this.ctx.authenticate(actor);
    const violations: Violation[] = [];
    checkUrn(input?.actorUrn, '/actorUrn', violations);
    const resourceUrn = input?.resourceSpec?.resourceUrn ?? undefined;
    if (resourceUrn !== undefined) checkUrn(resourceUrn, '/resourceSpec/resourceUrn', violations);
    throwIfViolations(violations, 'invalid privileges question');
    if (input.actorUrn !== caller) await this.ctx.authorizer.require(actor, 'MANAGE_POLICIES', "read another actor's privileges");
    const privileges: Privilege[] = [];
    for (const privilege of PRIVILEGES) {
      if ((await this.decide(input.actorUrn, privilege, resourceUrn, undefined)).allowed) privileges.push(privilege);
    }
    return { privileges };
  }

  private async decide(
    actor: Actor,
    privilege: Privilege,
    resourceUrn: string | undefined,
    propertyUrn: string | undefined,
  ): Promise<AccessExplanation> {
    const urn = actorUrn(actor);
    if (isScopedActor(actor) && !actor.scopes.includes(privilege))
      return {
        allowed: false,
        grantedBy: [],
        reason: `the access token of ${urn} is scoped to ${actor.scopes.join(', ') || 'nothing'}, which does not include ${privilege}`,
      };
    if (this.ctx.authorizer.isSuperUser(urn))
      return { allowed: true, grantedBy: ['superUsers'], reason: `${urn} is one of the catalog's superUsers` };
    const snapshot = await this.ctx.authorizer.state.current();
    if (snapshot.disabledAccounts.has(urn))
      return { allowed: false, grantedBy: [], reason: `${urn} is a disabled service account: it holds no privilege until it is enabled` };
    const grants = snapshot.grantsOf(urn);
    const everywhere = grants.everywhere.get(privilege) ?? [];
    if (everywhere.length)
      return {
        allowed: true,
        grantedBy: [...everywhere],
        reason: `${everywhere.map((s) => (s === 'options' ? 'the static policies option' : `policy ${s}`)).join(' and ')} grant${everywhere.length === 1 ? 's' : ''} ${privilege} to ${urn} on every resource`,
      };
    const holding = grants.scoped.filter((p) => p.privileges.has(privilege));
    if (!holding.length) {
      const others = snapshot.policies.filter((p) => p.privileges.has(privilege)).length;
      return {
        allowed: false,
        grantedBy: [],
        reason: `no active policy grants ${privilege} to ${urn}${others ? ` (${others} polic${others === 1 ? 'y grants' : 'ies grant'} it to other actors)` : ''}`,
      };
    }
    if (resourceUrn === undefined) {
      return {
        allowed: true,
        grantedBy: holding.map((p) => p.source),
        reason: `${holding.map(describePolicy).join(', ')} grant${holding.length === 1 ? 's' : ''} ${privilege} to ${urn} on the resources ${holding.length === 1 ? 'it names' : 'they name'} only: give resourceUrn to ask about one entity`,
      };
    }
    const { resource, parent } = await this.resources(
      resourceUrn,
      holding.some((p) => p.readsValues),
    );
    const covering = holding.filter((p) => policyCovers(p, resource, parent));
    if (!covering.length)
      return {
        allowed: false,
        grantedBy: [],
        reason: `${urn} holds ${privilege} only through ${holding.map(describePolicy).join(', ')}, and ${holding.length === 1 ? 'its resources do' : 'their resources do'} not cover ${resourceUrn}${parent ? ` (nor its dataset ${parent.urn})` : ''}`,
      };
    if (privilege === 'EDIT_ENTITY_PROPERTIES' && propertyUrn) {
      const forProperty = covering.filter((p) => p.coversProperty(propertyUrn));
      if (!forProperty.length)
        return {
          allowed: false,
          grantedBy: [],
          reason: `${covering.map(describePolicy).join(', ')} cover${covering.length === 1 ? 's' : ''} ${resourceUrn}, but limit${covering.length === 1 ? 's' : ''} EDIT_ENTITY_PROPERTIES to ${[...new Set(covering.flatMap((p) => p.resources?.properties ?? []))].join(', ')}, which does not include ${propertyUrn}`,
        };
      return {
        allowed: true,
        grantedBy: forProperty.map((p) => p.source),
        reason: `${forProperty.map(describePolicy).join(', ')} grant${forProperty.length === 1 ? 's' : ''} ${privilege} on ${resourceUrn} for ${propertyUrn}`,
      };
    }
    return {
      allowed: true,
      grantedBy: covering.map((p) => p.source),
      reason: `${covering.map(describePolicy).join(', ')} grant${covering.length === 1 ? 's' : ''} ${privilege} on ${resourceUrn}${privilege === 'EDIT_ENTITY_PROPERTIES' && covering.every((p) => p.resources?.properties) ? ` for the properties ${[...new Set(covering.flatMap((p) => p.resources?.properties ?? []))].join(', ')}` : ''}`,
    };
  }

  /** The resource (and a column's dataset) as stored, read only when a criterion reads stored values. */
  private async resources(urn: string, readValues: boolean): Promise<{ resource: ResourceView; parent: ResourceView | undefined }> {
    const parentUrn = parentOfField(urn);
    const stored = new Map<string, StoredEntity>();
    if (readValues) {
      for (const e of await this.ctx.adapter.readEntities(parentUrn ? [urn, parentUrn] : [urn], ['structuredProperties']))
        stored.set(e.urn, e);
    }
    return {
      resource: { urn, entityType: entityTypeOf(urn), stored: stored.get(urn) },
      parent: parentUrn ? { urn: parentUrn, entityType: entityTypeOf(parentUrn), stored: stored.get(parentUrn) } : undefined,
    };
  }
}

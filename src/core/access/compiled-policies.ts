import type { JsonObject, StoredEntity } from '../../adapter/types';
import { entityTypeOf, parseCheckedUrn } from '../urn';
import { qualifiedNameOf, restricts, VALUES_FIELD_PREFIX, type PolicyCriterion, type PolicyResources } from './policy-model';
import type { Privilege } from './privileges';

/** Where a grant comes from: a stored policy's URN, or `options` (the static `policies` of createCatalog). */
export type GrantSource = string;

/** What a resource check knows of an entity: its URN and type, and its stored values (before the write). */
export interface ResourceView {
  urn: string;
  entityType: string;
  /** The entity as stored (undefined: not there). Its `structuredProperties` aspect is what criteria read. */
  stored: StoredEntity | undefined;
}

/** A policy turned into matchers, once per change of the policies. */
export interface CompiledPolicy {
  source: GrantSource;
  name: string;
  privileges: ReadonlySet<Privilege>;
  users: ReadonlySet<string>;
  allUsers: boolean;
  /** No resource restriction: grants its privileges everywhere, for every property. */
  everywhere: boolean;
  /** Some criterion reads stored values (the resource's stored entity is needed). */
  readsValues: boolean;
  /** Whether the policy covers this resource (undefined when `everywhere`). */
  covers(resource: ResourceView): boolean;
  /** Whether EDIT_ENTITY_PROPERTIES covers the property (by its URN); every property when not limited. */
  coversProperty(propertyUrn: string): boolean;
  /** The policy's resources, for explanations. */
  resources: PolicyResources | undefined;
}

export function grantsTo(policy: CompiledPolicy, actor: string): boolean {
  return policy.allUsers || policy.users.has(actor);
}

/** The strings stored for a property on an entity (numbers as JavaScript prints them). */
function storedValues(entity: StoredEntity | undefined, qualifiedName: string): string[] {
  const aspect = entity?.aspects.structuredProperties?.value as JsonObject | undefined;
  const list = aspect?.properties;
  if (!Array.isArray(list)) return [];
  const urn = `urn:li:structuredProperty:${qualifiedName}`;
  for (const entry of list as JsonObject[]) {
    if (entry?.propertyUrn !== urn || !Array.isArray(entry.values)) continue;
    const out: string[] = [];
    for (const v of entry.values as JsonObject[]) {
      if (typeof v?.string === 'string') out.push(v.string);
      else if (typeof v?.double === 'number') out.push(String(v.double));
    }
    return out;
  }
  return [];
}

function holds(condition: PolicyCriterion['condition'], actual: readonly string[], wanted: readonly string[]): boolean {
  if (condition === 'NOT_EQUALS') return !actual.some((a) => wanted.includes(a));
  if (condition === 'STARTS_WITH') return actual.some((a) => wanted.some((w) => a.startsWith(w)));
  return actual.some((a) => wanted.includes(a));
}

type Matcher = (resource: ResourceView) => boolean;

function criterionMatcher(criterion: PolicyCriterion): Matcher {
  const { field, condition, values } = criterion;
  if (field === 'TYPE') return (r) => holds(condition, [r.entityType], values);
  if (field === 'URN') return (r) => holds(condition, [r.urn], values);
  const name = field.slice(VALUES_FIELD_PREFIX.length);
  return (r) => holds(condition, storedValues(r.stored, name), values);
}

function propertyMatcher(patterns: readonly string[] | undefined): (propertyUrn: string) => boolean {
  if (patterns === undefined || patterns.includes('*')) return () => true;
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    if (p.endsWith('.*')) prefixes.push(qualifiedNameOf(p.slice(0, -1)));
    else exact.add(qualifiedNameOf(p));
  }
  return (propertyUrn) => {
    const name = qualifiedNameOf(propertyUrn);
    return exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
  };
}

/** A policy as the authorizer evaluates it. */
export function compilePolicy(input: {
  source: GrantSource;
  name: string;
  privileges: readonly Privilege[];
  users: readonly string[];
  allUsers: boolean;
  resources: PolicyResources | undefined;
}): CompiledPolicy {
  const { resources } = input;
  const everywhere = !restricts(resources);
  const matchers: Matcher[] = [];
  let readsValues = false;
  if (resources && !everywhere) {
    if (resources.type !== undefined) {
      const type = resources.type;
      matchers.push((r) => r.entityType === type);
    }
    if (resources.resources !== undefined) {
      const urns = new Set(resources.resources);
      matchers.push((r) => urns.has(r.urn));
    }
    for (const criterion of resources.filter?.criteria ?? []) {
      if (criterion.field.startsWith(VALUES_FIELD_PREFIX)) readsValues = true;
      matchers.push(criterionMatcher(criterion));
    }
  }
  const matchesAll: Matcher = (r) => {
    for (const m of matchers) if (!m(r)) return false;
    return true;
  };
  return {
    source: input.source,
    name: input.name,
    privileges: new Set(input.privileges),
    users: new Set(input.users),
    allUsers: input.allUsers,
    everywhere,
    readsValues,
    covers: everywhere ? () => true : matchesAll,
    coversProperty: propertyMatcher(resources?.properties),
    resources,
  };
}

/** The dataset a `schemaField` URN belongs to (`urn:li:schemaField:(<dataset urn>,<field path>)`); undefined otherwise. */
export function parentOfField(urn: string): string | undefined {
  if (entityTypeOf(urn) !== 'schemaField') return undefined;
  const parent = parseCheckedUrn(urn, 'schemaField').parts[0];
  return typeof parent === 'string' && parent.startsWith('urn:li:') ? parent : undefined;
}

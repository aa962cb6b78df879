import type { Violation } from '../../errors';
import { entityTypeOf, urnProblem } from '../urn';
import type { Privilege } from './privileges';

/**
 * The resources of a policy, as the established platform's `DataHubPolicyInfo` spells them: a
 * `PLATFORM` policy (or one without resources) grants its privileges everywhere; a `METADATA` policy
 * with resources grants them on the entities its resources describe.
 */
export type PolicyType = 'PLATFORM' | 'METADATA';

export type CriterionCondition = 'EQUALS' | 'STARTS_WITH' | 'NOT_EQUALS';

/** One criterion of a resource filter: `TYPE`, `URN` or `structuredProperties.<qualified name>`. */
export interface PolicyCriterion {
  field: string;
  condition: CriterionCondition;
  values: string[];
}

export interface PolicyResources {
  /** One entity type (`dataset`, or its entity-type URN). */
  type?: string;
  /** These URNs only. */
  resources?: string[];
  /** Every resource (what no other field restricts): the platform's flag, kept as given. */
  allResources?: boolean;
  /** Every criterion must hold. */
  filter?: { criteria: PolicyCriterion[] };
  /** Which structured properties EDIT_ENTITY_PROPERTIES covers: qualified name, `prefix.*`, `*` or URN. */
  properties?: string[];
}

/** The privileges a policy with resources may grant: those decided per entity by the write path. */
const RESOURCE_PRIVILEGES: readonly Privilege[] = ['EDIT_ENTITY', 'EDIT_ENTITY_PROPERTIES', 'MANAGE_STRUCTURED_PROPERTIES'];

export const PROPERTY_URN_PREFIX = 'urn:li:structuredProperty:';
const ENTITY_TYPE_URN_PREFIX = 'urn:li:entityType:datahub.';
export const VALUES_FIELD_PREFIX = 'structuredProperties.';
const PROPERTY_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** An entity type name as a policy names it (`dataset` or `urn:li:entityType:datahub.dataset`). */
function entityTypeName(type: string): string {
  return type.startsWith(ENTITY_TYPE_URN_PREFIX) ? type.slice(ENTITY_TYPE_URN_PREFIX.length) : type;
}

/** The qualified name of a property URN (its key), or the name itself. */
export function qualifiedNameOf(property: string): string {
  return property.startsWith(PROPERTY_URN_PREFIX) ? property.slice(PROPERTY_URN_PREFIX.length) : property;
}

/** Whether a policy with these resources restricts where it applies (or which properties it covers). */
export function restricts(resources: PolicyResources | undefined): boolean {
  if (!resources) return false;
  return (
    resources.type !== undefined ||
    resources.resources !== undefined ||
    (resources.filter?.criteria.length ?? 0) > 0 ||
    resources.properties !== undefined
  );
}

/**
 * Semantic checks of a policy's resources (the JSON schema checked the shape): known fields and
 * entity types, URNs, property names; a policy with resources grants only resource privileges.
 */
export function checkResources(
  type: PolicyType,
  resources: PolicyResources | undefined,
  privileges: readonly Privilege[] | undefined,
  hasEntityType: (name: string) => boolean,
  violations: Violation[],
): void {
  if (!resources || !restricts(resources)) return;
  if (type === 'PLATFORM') {
    violations.push({ path: '/resources', message: 'a PLATFORM policy applies everywhere: give type METADATA to name resources' });
    return;
  }
  (privileges ?? []).forEach((privilege, i) => {
    if (!RESOURCE_PRIVILEGES.includes(privilege))
      violations.push({
        path: `/privileges/${i}`,
        message: `${privilege} is not granted per resource: a policy with resources may grant ${RESOURCE_PRIVILEGES.join(', ')} (give ${privilege} in a PLATFORM policy)`,
      });
  });
  if (resources.type !== undefined && !hasEntityType(entityTypeName(resources.type)))
    violations.push({ path: '/resources/type', message: `unknown entity type "${resources.type}"` });
  (resources.resources ?? []).forEach((urn, i) => {
    const problem = urnProblem(urn);
    if (problem) violations.push({ path: `/resources/resources/${i}`, message: problem });
  });
  (resources.filter?.criteria ?? []).forEach((criterion, i) => {
    const path = `/resources/filter/criteria/${i}`;
    const { field } = criterion;
    if (field === 'TYPE') {
      criterion.values.forEach((value, j) => {
        if (!hasEntityType(entityTypeName(value)))
          violations.push({ path: `${path}/values/${j}`, message: `unknown entity type "${value}"` });
      });
    } else if (field.startsWith(VALUES_FIELD_PREFIX)) {
      const name = field.slice(VALUES_FIELD_PREFIX.length);
      if (!PROPERTY_NAME.test(name))
        violations.push({
          path: `${path}/field`,
          message: `"${field}" does not name a structured property (structuredProperties.<qualified name>)`,
        });
    } else if (field !== 'URN') {
      violations.push({
        path: `${path}/field`,
        message: `unsupported criterion field "${field}": use TYPE, URN or structuredProperties.<qualified name>`,
      });
    }
  });
  (resources.properties ?? []).forEach((property, i) => {
    const path = `/resources/properties/${i}`;
    if (property === '*') return;
    if (property.startsWith('urn:')) {
      const problem =
        urnProblem(property) ?? (entityTypeOf(property) === 'structuredProperty' ? undefined : 'is not a structured property URN');
      if (problem) violations.push({ path, message: problem });
      return;
    }
    const name = property.endsWith('.*') ? property.slice(0, -2) : property;
    if (!PROPERTY_NAME.test(name))
      violations.push({ path, message: `"${property}" is not a qualified name, a "prefix.*" or a structured property URN` });
  });
}

/** The resources as stored: only the fields given, arrays copied. */
export function normalizeResources(resources: PolicyResources | null | undefined): PolicyResources | undefined {
  if (!resources) return undefined;
  const out: PolicyResources = {};
  if (resources.type !== undefined && resources.type !== null) out.type = entityTypeName(resources.type);
  if (resources.resources !== undefined && resources.resources !== null) out.resources = [...new Set(resources.resources)];
  if (resources.allResources === true) out.allResources = true;
  const criteria = resources.filter?.criteria;
  if (criteria && criteria.length)
    out.filter = {
      criteria: criteria.map((c) => ({
        field: c.field,
        condition: c.condition ?? 'EQUALS',
        values: c.field === 'TYPE' ? c.values.map(entityTypeName) : [...c.values],
      })),
    };
  if (resources.properties !== undefined && resources.properties !== null) out.properties = [...new Set(resources.properties)];
  return out;
}

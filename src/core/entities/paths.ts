import type { EntityRegistry } from './registry';
import { throwIfViolations, type Violation } from '../../errors';
import { ENTITY_TYPE_URN_PREFIX } from './platform-types';
import { parseUrn, urnProblem } from '../urn';

/**
 * How an aspect is written and read: `versioned` aspects are documents replaced by each write
 * (`catalog.entities`, which hands the aspects a domain service owns to it); `timeseries` aspects are
 * rows appended to an index and read newest first (`catalog.timeseries`).
 */
type AspectKind = 'versioned' | 'timeseries';

/** What a REST address `/entity/{entityName}/{urn}/{aspectName}` names, once checked. */
export interface ResolvedEntityAddress {
  /** The registered entity type name (`dataset`, `structuredProperty`). */
  entityType: string;
  urn?: string;
  aspect?: string;
  aspectKind?: AspectKind;
}

export interface EntityAddressInput {
  /** As written in the address: `dataset`, `DataSet`, `structuredproperty`, or an entity-type URN. */
  entityName: string;
  urn?: string;
  aspect?: string;
}

/**
 * Resolves the entity name, URN and aspect of an address against the registry. Entity names match
 * registered types ignoring case (the established platform writes them in lower case,
 * `structuredproperty`, as well as in camel case, `structuredProperty`). The URN must be of that type,
 * and the aspect one the type carries. Every violation is listed (INVALID_INPUT), each at `entityName`,
 * `urn` or `aspectName`.
 */
export function resolveEntityAddress(registry: EntityRegistry, input: EntityAddressInput): ResolvedEntityAddress {
  const violations: Violation[] = [];
  const entityType = entityTypeFromName(registry, input.entityName);
  if (entityType === undefined) {
    violations.push({
      path: 'entityName',
      message: `unknown entity type "${input.entityName}"; known types: ${registry.entityTypeNames().join(', ')}`,
    });
  }
  let urn: string | undefined;
  if (input.urn !== undefined) {
    const problem = urnProblem(input.urn);
    if (problem !== undefined) violations.push({ path: 'urn', message: problem });
    else {
      urn = input.urn;
      const ofUrn = parseUrn(urn).entityType;
      if (entityType !== undefined && ofUrn !== entityType) {
        violations.push({ path: 'urn', message: `"${urn}" is a ${ofUrn} URN, but the address names entity type "${entityType}"` });
      }
    }
  }
  let aspectKind: AspectKind | undefined;
  if (input.aspect !== undefined) {
    if (!registry.hasAspect(input.aspect)) {
      violations.push({ path: 'aspectName', message: `unknown aspect "${input.aspect}"` });
    } else if (entityType !== undefined) {
      const spec = registry.entityType(entityType);
      if (!spec.aspects.includes(input.aspect)) {
        violations.push({
          path: 'aspectName',
          message: `entity type "${entityType}" has no aspect "${input.aspect}"; its aspects: ${spec.aspects.join(', ')}`,
        });
      } else {
        aspectKind = registry.aspect(input.aspect).timeseries ? 'timeseries' : 'versioned';
      }
    }
  }
  throwIfViolations(violations, 'invalid address');
  return {
    entityType: entityType!,
    ...(urn !== undefined ? { urn } : {}),
    ...(input.aspect !== undefined ? { aspect: input.aspect, aspectKind: aspectKind! } : {}),
  };
}

function entityTypeFromName(registry: EntityRegistry, name: string): string | undefined {
  const exact = registry.entityNameFromInput(name);
  if (exact !== undefined) return exact;
  const bare = name.startsWith(ENTITY_TYPE_URN_PREFIX) ? name.slice(ENTITY_TYPE_URN_PREFIX.length) : name;
  const lower = bare.toLowerCase();
  return registry.entityTypeNames().find((n) => n.toLowerCase() === lower);
}

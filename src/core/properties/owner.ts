import type { Actor } from '../access/actor';
import type { DomainOwners, EntityDeleter, ReadTransform } from '../entities/owner';
import { cleanupJob } from './cleanup';
import type { DefinitionOwner } from './definition-owner';
import type { PropertyDefinitionService } from './definitions';
import { definitionInfoOf } from './lookup';
import { SETTINGS_ASPECT } from './settings';
import { DEFINITION_ASPECT, STRUCTURED_PROPERTY_ENTITY, VALUES_ASPECT } from './types';
import type { ValueOwner } from './value-owner';

/**
 * What the properties domain owns: `propertyDefinition`, `structuredPropertySettings` and the `status`
 * of a structured property (MANAGE_STRUCTURED_PROPERTIES), `structuredProperties` on any entity
 * (EDIT_ENTITY_PROPERTIES), the structured property entity's deletion (its values are cleaned up in the
 * background), and what readers see of values (those of missing, soft-deleted or superseded
 * definitions are hidden).
 */
export function propertyOwners(definitions: DefinitionOwner, values: ValueOwner, visible: ReadTransform): DomainOwners {
  return {
    aspects: [
      {
        name: 'structured property definitions',
        governs: (_entityType, aspect) => aspect === DEFINITION_ASPECT,
        privilege: () => 'MANAGE_STRUCTURED_PROPERTIES',
        prepare: async (_principal, items, violations) => definitions.prepareDefinitions(items, violations),
      },
      {
        name: 'structured property settings',
        governs: (_entityType, aspect) => aspect === SETTINGS_ASPECT,
        privilege: () => 'MANAGE_STRUCTURED_PROPERTIES',
        prepare: (principal: Actor, items, violations) => definitions.prepareSettings(principal, items, violations),
      },
      {
        name: 'structured property status',
        governs: (entityType, aspect) => entityType === STRUCTURED_PROPERTY_ENTITY && aspect === 'status',
        privilege: () => 'MANAGE_STRUCTURED_PROPERTIES',
        prepare: async (_principal, items, violations) => definitions.prepareStatus(items, violations),
      },
      {
        name: 'structured property values',
        governs: (_entityType, aspect) => aspect === VALUES_ASPECT,
        privilege: () => 'EDIT_ENTITY_PROPERTIES',
        // Its plans read the values the entity holds, and nothing else of it.
        reads: [VALUES_ASPECT],
        prepare: (principal, items, violations, batch) => values.prepareItems(principal, items, violations, batch),
      },
    ],
    entityTypes: [
      {
        entityType: STRUCTURED_PROPERTY_ENTITY,
        deletePrivilege: 'MANAGE_STRUCTURED_PROPERTIES',
        planDelete(urn, entity) {
          const info = definitionInfoOf(entity);
          return { jobs: info ? [cleanupJob(urn, info.incarnation)] : [] };
        },
      },
    ],
    read: visible,
  };
}

/** A structured property is deleted by `catalog.properties` (hard unless the caller says soft, as the platform does). */
export function propertyDeleter(definitions: PropertyDefinitionService): EntityDeleter {
  return {
    entityType: STRUCTURED_PROPERTY_ENTITY,
    softByDefault: false,
    delete: (actor, urn, options) => definitions.deletion(actor, urn, options),
  };
}

import type { StructuredPropertyService as PropertyDefinitionsAndValues } from '../properties/service';
import type { PropertyValueEditing } from '../properties/value-editing';
import type { ApplyToMatchesService } from './apply-service';
import type { DefinitionChangePreviews } from './service';

/**
 * `catalog.properties`: structured property definitions and their values on entities, and the
 * stewardship tools over them (editing many entities' values, applying values to every match of a search,
 * previewing the impact of a definition change).
 */
export interface StructuredPropertyService
  extends PropertyDefinitionsAndValues, PropertyValueEditing, ApplyToMatchesService, DefinitionChangePreviews {}

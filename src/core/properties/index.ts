// The public face of the properties domain: what transports, the test kit and the package root use.
export { CLEANUP_JOB_TYPE, SYSTEM_ACTOR } from './cleanup';
export { definitionKey, definitionKeyOf, incarnationOf } from './definition-key';
export { parseYamlDefinitions, toGraphqlInput, toReadBack, toRestInput, toYamlEntry } from './definition-shapes';
export { assignmentsOf } from './lookup';
export { propertiesModule } from './service';
export type { PropertiesDeps, PropertiesParts, PropertiesService } from './service';
export { createValueEditing, EDIT_CHUNK_ENTITIES, MAX_EDIT_ENTITIES } from './value-editing';
export type { EditValuesOptions, EditValuesSummary, PropertyValueEditing, PropertyValuesEdit } from './value-editing';
export type { PropertyValueEdit } from './value-edits';
export type { StructuredPropertyService } from './service';
export * from './types';
export { SETTINGS_ASPECT } from './settings';
export type { StructuredPropertySettings, StructuredPropertySettingsInput } from './settings';
// For the transports' decoders (GraphQL, YAML): the input schemas and the name rules they share with the domain.
export { checkName, parseValueType } from './definition-rules';
export {
  graphqlAssignmentSchema,
  graphqlCreateDefinitionSchema,
  graphqlUpdateDefinitionSchema,
  yamlDefinitionSchema,
} from '../validation/schemas/structured-properties';
export type { DecoderReport } from './values';

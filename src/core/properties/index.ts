// The public face of the properties domain: what transports, the test kit and the package root use.
export { parseYamlDefinitions, toGraphqlInput, toReadBack, toRestInput, toYamlEntry } from './definition-shapes';
export { propertiesModule } from './service';
export type { EditValuesOptions, EditValuesSummary, PropertyValueEditing, PropertyValuesEdit } from './value-editing';
export type { PropertyValueEdit } from './value-edits';
export * from './types';
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

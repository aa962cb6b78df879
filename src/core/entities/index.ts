// The public face of the entities domain: what transports, the test kit and the package root use.
export { resolveEntityAddress } from './paths';
export type { ResolvedEntityAddress } from './paths';
export { EntityRegistry } from './registry';
export type { AspectSpec, EntityTypeSpec, SearchFieldSpec } from './registry';
export { EntityService } from './service';
export type {
  AspectView,
  AspectWriteOptions,
  EntityDeletion,
  EntityReadOptions,
  EntityScrollPage,
  EntityUpsert,
  EntityView,
} from './service';
export { DEFAULT_SCROLL_COUNT } from './service';
export { WritePipeline } from './write-pipeline';
export { entitiesModule } from './module';
export { keyAspectName } from './key-aspects';
export type { ChangeProposal, ChangeType, ProposalOutcome } from './proposal-check';
export type { ArrayPrimaryKeys, JsonPatchOperation } from './json-patch';
export type {
  AspectMap,
  AspectName,
  AspectValues,
  AuditStampValue,
  EntityTypeInput,
  EntityTypeMap,
  EntityTypeName,
  GraphQLEntityTypeMap,
  GraphQLEntityTypeName,
  InfoAspectValue,
  StatusValue,
  StructuredPropertiesValue,
  TimeseriesRowValue,
} from './aspect-types';

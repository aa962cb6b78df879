// The public face of the stewardship domain: changes to many entities at once, previewed and run durably.
export { applyOwners } from './apply-owner';
export { createApplyToMatches } from './apply-service';
export type { ApplyToMatchesService } from './apply-service';
export type { ApplyDependencies } from './apply-check';
export { APPLY_JOB_TYPE } from './apply-job';
export type {
  ApplyJob,
  ApplyOptions,
  ApplyPreview,
  ApplySample,
  ApplyState,
  ApplyStatus,
  ApplyToMatchesInput,
  ApplyViolation,
  CancelApplyResult,
} from './apply-types';
export type { StructuredPropertyService } from './catalog-properties';
export { createStewardship } from './service';
export type { DefinitionChangePreviews } from './service';
export { stewardshipModule } from './module';

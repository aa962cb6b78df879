// The public face of the stewardship domain: changes to many entities at once, previewed and run durably.
export type { ApplyToMatchesService } from './apply-service';
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
export { stewardshipModule } from './module';

import type { JsonObject, StoredAspect } from '../../adapter/types';
import type { Violation } from '../../errors';

/**
 * The system metadata a writer may send with an aspect, and what a reader sees of it. The stored
 * system metadata also holds the catalog's own bookkeeping (property value keys, definition
 * incarnations, a token's salted hash): none of that is ever read back, and a writer cannot set it.
 */

/** Fields a writer may set; they are kept with the aspect and read back as written. */
const KEPT_STRINGS = ['runId', 'lastRunId', 'pipelineName', 'registryName', 'registryVersion'] as const;
const KEPT_FIELDS: readonly string[] = [...KEPT_STRINGS, 'lastObserved', 'properties'];
/** Fields the catalog assigns itself: accepted on input for compatibility, and ignored. */
const ASSIGNED_FIELDS: readonly string[] = ['version', 'aspectCreated', 'aspectModified'];

/**
 * Where the writer's fields are kept inside the stored system metadata, apart from the catalog's own
 * bookkeeping (which readers never see).
 */
const CLIENT_SYSTEM_METADATA = 'clientSystemMetadata';

/** What a reader is told when no run id was written (the platform's spelling). */
const NO_RUN_ID = 'no-run-id-provided';

/** Every problem of a writer's system metadata, at `path` (a JSON pointer). */
export function systemMetadataProblems(value: unknown, path: string): Violation[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [{ path, message: 'must be an object' }];
  const problems: Violation[] = [];
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    const at = `${path}/${key}`;
    if ((KEPT_STRINGS as readonly string[]).includes(key)) {
      if (typeof field !== 'string' || field.length > 1000)
        problems.push({ path: at, message: 'must be a string of at most 1000 characters' });
    } else if (key === 'lastObserved') {
      if (!Number.isSafeInteger(field) || (field as number) < 0)
        problems.push({ path: at, message: 'must be a non-negative integer (epoch milliseconds)' });
    } else if (key === 'properties') {
      if (field === null || typeof field !== 'object' || Array.isArray(field) || Object.values(field).some((v) => typeof v !== 'string')) {
        problems.push({ path: at, message: 'must be an object of string values' });
      }
    } else if (!ASSIGNED_FIELDS.includes(key)) {
      problems.push({ path: at, message: `unknown system metadata field; known: ${[...KEPT_FIELDS, ...ASSIGNED_FIELDS].join(', ')}` });
    }
  }
  return problems;
}

/** The fields of a writer's (checked) system metadata that are kept. */
export function keptSystemMetadata(value: JsonObject | undefined): JsonObject | undefined {
  if (!value) return undefined;
  const kept: JsonObject = {};
  for (const key of KEPT_FIELDS) if (value[key] !== undefined) kept[key] = value[key];
  return Object.keys(kept).length ? kept : undefined;
}

/** The writer's fields as stored with an aspect; undefined when it sent none. */
export function clientSystemMetadataOf(stored: JsonObject | undefined): JsonObject | undefined {
  const value = stored?.[CLIENT_SYSTEM_METADATA];
  return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
}

/** A stored aspect's system metadata as a reader sees it: what a writer set, and the catalog's version and audit stamps. */
export function publicSystemMetadata(aspect: Pick<StoredAspect, 'version' | 'created' | 'lastModified' | 'systemMetadata'>): JsonObject {
  const client = clientSystemMetadataOf(aspect.systemMetadata) ?? {};
  const out: JsonObject = { lastObserved: aspect.lastModified.time, runId: NO_RUN_ID, lastRunId: NO_RUN_ID };
  for (const key of KEPT_FIELDS) if (client[key] !== undefined) out[key] = client[key];
  out.version = String(aspect.version);
  out.aspectCreated = { time: aspect.created.time, actor: aspect.created.actor };
  out.aspectModified = { time: aspect.lastModified.time, actor: aspect.lastModified.actor };
  return out;
}

/** Whether the object has an own key (without listing them). */
function hasOwnKeys(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return true;
  return false;
}

/**
 * The system metadata to store with a written aspect: the catalog's own bookkeeping (`own`, which may
 * carry a previous write's fields forward) with the writer's fields replacing any earlier ones.
 */
export function withKeptSystemMetadata(own: JsonObject | undefined, kept: JsonObject | undefined): JsonObject | undefined {
  // The common case on the bulk path (no writer's metadata before or now): the bookkeeping as it is.
  if (!kept && !(own && CLIENT_SYSTEM_METADATA in own)) return own && hasOwnKeys(own) ? own : undefined;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(own ?? {})) if (key !== CLIENT_SYSTEM_METADATA) out[key] = value;
  if (kept) out[CLIENT_SYSTEM_METADATA] = kept;
  return Object.keys(out).length ? out : undefined;
}

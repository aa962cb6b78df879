import type { JsonObject, JsonValue } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { isCatalogError, type Violation } from '../../errors';
import { entityTypeOf, urnProblem } from '../urn';
import { applyJsonPatch, jsonPatchViolations, type ArrayPrimaryKeys, type JsonPatchOperation } from './json-patch';
import { isKeyAspectName, keyAspectName } from './key-aspects';
import type { StoredEntity } from '../../adapter/types';
import type { WritePipeline } from './write-pipeline';

/** What proposals need of the entity service (its write path and its reads). */
export interface ProposalHost {
  readonly pipeline: WritePipeline;
  readVisible(urns: readonly string[]): Promise<StoredEntity[]>;
  validateAspectValue(aspect: string, value: unknown, prefix?: string): Violation[];
}

/**
 * Metadata change proposals (DataHub's MCP): one aspect of one entity, upserted, created, patched or
 * deleted. Every proposal of a call is checked before anything is written; see `applyProposals`.
 */

const CHANGE_TYPES = ['UPSERT', 'CREATE', 'CREATE_ENTITY', 'PATCH', 'DELETE'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** A change proposal as DataHub's clients send it. */
export interface ChangeProposal {
  entityType?: string;
  entityUrn: string;
  changeType: ChangeType;
  aspectName: string;
  /**
   * The aspect: `value` is its JSON text (`contentType` `application/json`; for PATCH a JSON Patch array
   * or `{ patch, arrayPrimaryKeys }`, `application/json-patch+json`), or `json` the value itself (the
   * form of DataHub's metadata files). Left out for DELETE.
   */
  aspect?: { value?: string; contentType?: string; json?: JsonValue };
  systemMetadata?: JsonObject;
}

/** What one proposal did. */
export interface ProposalOutcome {
  urn: string;
  aspectName: string;
  changeType: ChangeType;
  /** False when nothing was there to delete, or a key aspect was upserted (keys come from the URN). */
  changed: boolean;
}

/** Whether the generic rules (the aspect's schema) or a domain's owner check a write of the aspect. */
type Ownership = 'generic' | 'owned';

/**
 * An upsert proposal, decoded. A class, not an object literal: a call's proposals live for the whole call,
 * and V8 makes the next objects of a literal site that a young-generation collection found all alive in
 * the old generation (pretenuring), where they keep what they point at through every collection.
 */
export class CheckedUpsert {
  readonly kind = 'upsert' as const;
  systemMetadata?: JsonObject;

  constructor(
    readonly index: number,
    readonly urn: string,
    readonly entityType: string,
    readonly aspect: string,
    readonly value: JsonObject,
    readonly create: 'aspect' | 'entity' | false,
    readonly ownership: Ownership,
  ) {}
}

/** A proposal checked and decoded. */
export type Checked =
  | CheckedUpsert
  | {
      kind: 'patch';
      index: number;
      urn: string;
      entityType: string;
      aspect: string;
      operations: JsonPatchOperation[];
      arrayPrimaryKeys?: ArrayPrimaryKeys;
      ownership: Ownership;
    }
  | { kind: 'delete'; index: number; urn: string; entityType: string; aspect: string; key: boolean }
  | { kind: 'row'; index: number; urn: string; aspect: string; row: JsonObject }
  | { kind: 'key'; index: number; urn: string; aspect: string; changeType: ChangeType };

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

/** Decodes the aspect's JSON (text or `json`), adding a violation when it is not what the change type needs. */
function decodeAspect(raw: unknown, changeType: ChangeType, at: string, violations: Violation[]): JsonValue | undefined {
  if (!isObject(raw)) {
    violations.push({ path: `${at}/aspect`, message: 'is required: { value: "<JSON text>", contentType: "application/json" }' });
    return undefined;
  }
  const patch = changeType === 'PATCH';
  if (raw.contentType !== undefined) {
    const allowed = patch ? ['application/json-patch+json', 'application/json'] : ['application/json'];
    if (typeof raw.contentType !== 'string' || !allowed.includes(raw.contentType.split(';')[0]!.trim().toLowerCase())) {
      violations.push({ path: `${at}/aspect/contentType`, message: `must be ${allowed.join(' or ')}` });
      return undefined;
    }
  }
  if (raw.json !== undefined) return raw.json as JsonValue;
  if (typeof raw.value !== 'string') {
    violations.push({ path: `${at}/aspect/value`, message: 'must be the aspect as JSON text' });
    return undefined;
  }
  try {
    return JSON.parse(raw.value) as JsonValue;
  } catch (error) {
    violations.push({
      path: `${at}/aspect/value`,
      message: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    });
    return undefined;
  }
}

/**
 * The URN checked last (a connector sends an entity's aspects one after the other): the next proposal
 * of the same URN is not read again. One per call of `applyProposals`.
 */
export interface UrnMemo {
  urn?: string;
}

/** Checks one proposal; returns it decoded, or undefined with its violations added. */
export function checkProposal(
  ctx: CatalogContext,
  service: ProposalHost,
  raw: unknown,
  index: number,
  at: string,
  violations: Violation[],
  memo: UrnMemo = {},
): Checked | undefined {
  const before = violations.length;
  if (!isObject(raw)) {
    violations.push({ path: at || '/', message: 'must be a change proposal { entityUrn, changeType, aspectName, aspect }' });
    return undefined;
  }
  if (raw.entityUrn !== memo.urn || memo.urn === undefined) {
    const problem = urnProblem(raw.entityUrn);
    if (problem) violations.push({ path: `${at}/entityUrn`, message: problem });
    else memo.urn = raw.entityUrn as string;
  }
  if (typeof raw.changeType !== 'string' || !(CHANGE_TYPES as readonly string[]).includes(raw.changeType)) {
    violations.push({ path: `${at}/changeType`, message: `must be one of ${CHANGE_TYPES.join(', ')}` });
  }
  if (typeof raw.aspectName !== 'string' || raw.aspectName === '')
    violations.push({ path: `${at}/aspectName`, message: 'must name an aspect' });
  if (raw.systemMetadata !== undefined && raw.systemMetadata !== null && !isObject(raw.systemMetadata)) {
    violations.push({ path: `${at}/systemMetadata`, message: 'must be an object' });
  }
  if (violations.length > before) return undefined;
  const urn = raw.entityUrn as string;
  const changeType = raw.changeType as ChangeType;
  const aspect = raw.aspectName as string;
  const entityType = entityTypeOf(urn);
  if (raw.entityType !== undefined && raw.entityType !== entityType) {
    violations.push({
      path: `${at}/entityType`,
      message: `"${String(raw.entityType)}" differs from the entity type of ${urn} (${entityType})`,
    });
    return undefined;
  }
  if (!ctx.registry.hasEntityType(entityType)) {
    violations.push({
      path: `${at}/entityUrn`,
      message: `unknown entity type "${entityType}"; known types: ${ctx.registry.entityTypeNames().join(', ')}`,
    });
    return undefined;
  }
  if (isKeyAspectName(aspect)) {
    if (aspect !== keyAspectName(entityType)) {
      violations.push({ path: `${at}/aspectName`, message: `"${aspect}" is not the key aspect of ${entityType} entities` });
      return undefined;
    }
    if (changeType === 'PATCH') {
      violations.push({ path: `${at}/changeType`, message: 'a key aspect cannot be patched: it is derived from the URN' });
      return undefined;
    }
    return changeType === 'DELETE'
      ? { kind: 'delete', index, urn, entityType, aspect, key: true }
      : { kind: 'key', index, urn, aspect, changeType };
  }
  const spec = ctx.registry.entityType(entityType);
  if (!ctx.registry.hasAspect(aspect) || !spec.aspects.includes(aspect)) {
    violations.push({
      path: `${at}/aspectName`,
      message: `entity type "${entityType}" has no aspect "${aspect}"; its aspects: ${spec.aspects.join(', ')}`,
    });
    return undefined;
  }
  if (ctx.registry.aspect(aspect).timeseries) {
    // A timeseries aspect's proposal appends a row (rows are never replaced, patched or deleted one by one).
    if (changeType !== 'UPSERT' && changeType !== 'CREATE') {
      violations.push({
        path: `${at}/changeType`,
        message: `"${aspect}" is a timeseries aspect: its proposals append rows (UPSERT), never ${changeType}`,
      });
      return undefined;
    }
    const row = decodeAspect(raw.aspect, changeType, at, violations);
    if (row === undefined) return undefined;
    // The row itself is checked by the timeseries owner, with the batch.
    return { kind: 'row', index, urn, aspect, row: row as JsonObject };
  }
  const ownership: Ownership = service.pipeline.ownerOf(entityType, aspect) ? 'owned' : 'generic';
  if (changeType === 'DELETE') return { kind: 'delete', index, urn, entityType, aspect, key: false };
  const decoded = decodeAspect(raw.aspect, changeType, at, violations);
  if (decoded === undefined) return undefined;
  if (changeType === 'PATCH') {
    const body = Array.isArray(decoded) ? { patch: decoded } : isObject(decoded) ? decoded : undefined;
    if (!body || !Array.isArray(body.patch)) {
      violations.push({
        path: `${at}/aspect/value`,
        message: 'must be a JSON Patch: [{ op, path, value? }] or { patch: [...], arrayPrimaryKeys? }',
      });
      return undefined;
    }
    const found = jsonPatchViolations(body.patch, `${at}/aspect/value${Array.isArray(decoded) ? '' : '/patch'}`);
    const keys = body.arrayPrimaryKeys;
    if (
      keys !== undefined &&
      (!isObject(keys) || Object.values(keys).some((v) => !Array.isArray(v) || v.some((k) => typeof k !== 'string')))
    ) {
      found.push({ path: `${at}/aspect/value/arrayPrimaryKeys`, message: 'must map array fields to lists of member names' });
    }
    violations.push(...found);
    if (found.length) return undefined;
    return {
      kind: 'patch',
      index,
      urn,
      entityType,
      aspect,
      operations: body.patch as unknown as JsonPatchOperation[],
      ...(keys !== undefined ? { arrayPrimaryKeys: keys as ArrayPrimaryKeys } : {}),
      ownership,
    };
  }
  if (!isObject(decoded)) {
    violations.push({ path: `${at}/aspect/value`, message: 'must be a JSON object (the aspect)' });
    return undefined;
  }
  if (ownership === 'generic') violations.push(...ctx.registry.validateAspect(aspect, decoded, `${at}/aspect/value`));
  const create = changeType === 'CREATE' ? 'aspect' : changeType === 'CREATE_ENTITY' ? 'entity' : false;
  const checked = new CheckedUpsert(index, urn, entityType, aspect, decoded as JsonObject, create, ownership);
  if (isObject(raw.systemMetadata)) checked.systemMetadata = raw.systemMetadata as JsonObject;
  return checked;
}

/** Tries generic patches on the current state (with the batch's earlier upserts and deletes), so that a failing one writes nothing. */
export async function dryRunGenericPatches(
  service: ProposalHost,
  checked: readonly Checked[],
  at: (i: number) => string,
  violations: Violation[],
): Promise<void> {
  const patched = checked.filter((c) => c.kind === 'patch' && c.ownership === 'generic');
  if (patched.length === 0) return;
  const urns = [...new Set(patched.map((c) => c.urn))];
  const state = new Map<string, JsonObject | undefined>();
  for (const entity of await service.readVisible(urns)) {
    for (const [name, aspect] of Object.entries(entity.aspects)) state.set(`${entity.urn}\n${name}`, aspect.value);
  }
  const failed = new Set<string>();
  for (const c of checked) {
    if (c.kind === 'key' || c.kind === 'row') continue;
    const slot = `${c.urn}\n${c.aspect}`;
    if (c.kind === 'upsert') state.set(slot, c.value);
    else if (c.kind === 'delete') state.set(slot, undefined);
    else if (c.ownership === 'generic' && !failed.has(slot)) {
      try {
        const next = applyJsonPatch(state.get(slot), c.operations, {
          describe: `${c.aspect} of ${c.urn}`,
          prefix: `${at(c.index)}/aspect/value`,
          ...(c.arrayPrimaryKeys ? { arrayPrimaryKeys: c.arrayPrimaryKeys } : {}),
        });
        const found = service.validateAspectValue(c.aspect, next, `${at(c.index)}/aspect/value`);
        if (found.length) {
          violations.push(...found.map((v) => ({ path: v.path, message: `after the patch: ${v.message}` })));
          failed.add(slot);
        } else state.set(slot, next);
      } catch (error) {
        if (!isCatalogError(error)) throw error;
        violations.push(...(error.details.length ? error.details : [{ path: at(c.index), message: error.message }]));
        failed.add(slot);
      }
    }
  }
}

/** CREATE refuses an aspect that exists, CREATE_ENTITY an entity that exists (as stored now). */
export async function checkCreates(
  service: ProposalHost,
  checked: readonly Checked[],
  at: (i: number) => string,
  violations: Violation[],
): Promise<void> {
  const creates = checked.filter((c): c is Extract<Checked, { kind: 'upsert' }> => c.kind === 'upsert' && c.create !== false);
  if (creates.length === 0) return;
  const existing = new Map((await service.readVisible([...new Set(creates.map((c) => c.urn))])).map((e) => [e.urn, e]));
  for (const c of creates) {
    const entity = existing.get(c.urn);
    if (c.create === 'entity' && entity)
      violations.push({ path: `${at(c.index)}/changeType`, message: `CREATE_ENTITY: ${c.urn} exists already` });
    if (c.create === 'aspect' && entity?.aspects[c.aspect])
      violations.push({ path: `${at(c.index)}/changeType`, message: `CREATE: ${c.aspect} of ${c.urn} exists already` });
  }
}

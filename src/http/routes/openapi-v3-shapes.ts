import type { JsonObject } from '../../adapter/types';
import type { EntityUpsert, EntityView, JsonPatchOperation } from '../../core/entities';
import type { FacetFilterInput } from '../../core/search';
import { entityTypeOf, urnProblem } from '../../core/urn';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';

/**
 * The spelling of DataHub's OpenAPI v3 entity family: an entity is `{ urn, <aspect>: { value,
 * systemMetadata? } }` (aspects beside the URN, not under `aspects`), a batch is a list of them.
 * These turn request bodies into catalog calls and views into answers; they decide nothing.
 */

/** One aspect in v3 spelling. */
export interface AspectV3 {
  value: JsonObject;
  systemMetadata?: JsonObject;
  /** Who wrote this version and when (with `systemMetadata=true`). */
  auditStamp?: { time: number; actor: string };
}

/** Envelope members of an aspect besides `value` and `systemMetadata`: accepted and not used (no conditional writes here). */
const IGNORED_ENVELOPE = ['headers', 'auditStamp'];

/** An entity view in v3 spelling; `only` limits the aspects (a write answers the aspects it wrote). */
export function entityV3(view: EntityView, withSystemMetadata: boolean, only?: ReadonlySet<string>): Record<string, AspectV3 | string> {
  const out: Record<string, AspectV3 | string> = { urn: view.urn };
  for (const [name, aspect] of Object.entries(view.aspects)) {
    if (only && !only.has(name)) continue;
    out[name] = aspectV3(aspect, withSystemMetadata);
  }
  return out;
}

export function aspectV3(aspect: EntityView['aspects'][string], withSystemMetadata: boolean): AspectV3 {
  if (!withSystemMetadata) return { value: aspect.value };
  return {
    value: aspect.value,
    ...(aspect.systemMetadata ? { systemMetadata: aspect.systemMetadata } : {}),
    auditStamp: aspect.lastModified,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An aspect envelope `{ value, systemMetadata?, headers? }`: its problems at `path`, or its parts. */
export function readEnvelope(
  envelope: unknown,
  path: string,
  violations: Violation[],
): { value: JsonObject; systemMetadata?: JsonObject } | undefined {
  if (!isObject(envelope)) {
    violations.push({ path, message: 'must be an aspect envelope { value, systemMetadata? }' });
    return undefined;
  }
  let ok = true;
  for (const key of Object.keys(envelope)) {
    if (key !== 'value' && key !== 'systemMetadata' && !IGNORED_ENVELOPE.includes(key)) {
      violations.push({ path: `${path}/${key}`, message: 'is not a member of an aspect envelope (value, systemMetadata, headers)' });
      ok = false;
    }
  }
  if (!isObject(envelope.value)) {
    violations.push({ path: `${path}/value`, message: 'is required: the aspect document (an object)' });
    ok = false;
  }
  if (envelope.systemMetadata !== undefined && envelope.systemMetadata !== null && !isObject(envelope.systemMetadata)) {
    violations.push({ path: `${path}/systemMetadata`, message: 'must be an object' });
    ok = false;
  }
  if (!ok) return undefined;
  const systemMetadata = isObject(envelope.systemMetadata) ? (envelope.systemMetadata as JsonObject) : undefined;
  return { value: envelope.value as JsonObject, ...(systemMetadata ? { systemMetadata } : {}) };
}

/**
 * A v3 batch body (`[{ urn, <aspect>: { value, systemMetadata? } }]`) as bulk-write items. Every
 * problem is listed at its place in the body (`/<index>/...`); each URN must be of `entityType`.
 */
export function batchToUpserts(body: unknown, entityType: string): EntityUpsert[] {
  if (!Array.isArray(body)) {
    const message = 'the body must be a list of entities [{ urn, <aspect name>: { value, systemMetadata? } }]';
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: '/', message: 'must be an array' }] });
  }
  const violations: Violation[] = [];
  const items: EntityUpsert[] = [];
  body.forEach((entity: unknown, i) => {
    if (!isObject(entity)) {
      violations.push({ path: `/${i}`, message: 'must be an entity { urn, <aspect name>: { value } }' });
      return;
    }
    const urn = entity.urn;
    const problem = urnProblem(urn);
    if (problem !== undefined) violations.push({ path: `/${i}/urn`, message: problem });
    else if (entityTypeOf(urn as string) !== entityType) {
      violations.push({
        path: `/${i}/urn`,
        message: `"${String(urn)}" is a ${entityTypeOf(urn as string)} URN, but the address names entity type "${entityType}"`,
      });
    }
    const aspects: Record<string, JsonObject> = {};
    const systemMetadata: Record<string, JsonObject> = {};
    for (const [name, envelope] of Object.entries(entity)) {
      if (name === 'urn') continue;
      const read = readEnvelope(envelope, `/${i}/${name}`, violations);
      if (!read) continue;
      aspects[name] = read.value;
      if (read.systemMetadata) systemMetadata[name] = read.systemMetadata;
    }
    items.push({ urn: urn as string, aspects, ...(Object.keys(systemMetadata).length ? { systemMetadata } : {}) });
  });
  throwIfViolations(
    violations,
    body.length === 1
      ? 'invalid entity'
      : `invalid entities (${new Set(violations.map((v) => v.path.split('/')[1])).size} of ${body.length})`,
  );
  return items;
}

/**
 * Where a bulk write's canonical path lies in the v3 body (for `withPaths`): `/<i>/aspects/<name>/...` is
 * `/<i>/<name>/value/...`, `/<i>/systemMetadata/<name>/...` is `/<i>/<name>/systemMetadata/...` (a
 * one-item write reports without the index; the index is put back).
 */
export function v3BatchPath(items: number): (path: string) => string {
  const single = items === 1;
  return (path) => {
    const indexed = single && !/^\/\d+(\/|$)/.test(path) ? `/0${path === '/' ? '' : path}` : path;
    return indexed
      .replace(/^\/(\d+)\/aspects\/([^/]+)/, '/$1/$2/value')
      .replace(/^\/(\d+)\/systemMetadata\/([^/]+)/, '/$1/$2/systemMetadata')
      .replace(/^\/(\d+)\/aspects$/, '/$1');
  };
}

/**
 * Where a one-aspect write's canonical path lies in the `{ value, systemMetadata }` body (for
 * `withPaths`): `/aspects/<aspect>/...` is `/value/...`, `/systemMetadata/<aspect>/...` is `/systemMetadata/...`.
 */
export function envelopePath(aspect: string): (path: string) => string {
  const prefixes: Array<[string, string]> = [
    [`/aspects/${aspect}`, '/value'],
    [`/systemMetadata/${aspect}`, '/systemMetadata'],
  ];
  return (path) => {
    const hit = prefixes.find(([from]) => path === from || path.startsWith(`${from}/`));
    return hit ? hit[1] + path.slice(hit[0].length) : path;
  };
}

/** The platform's condition names where they differ from the catalog's. */
const CONDITION_NAMES: Readonly<Record<string, string>> = { STARTS_WITH: 'START_WITH', ENDS_WITH: 'END_WITH' };

/**
 * A generic scroll's body `{ entities?, aspects?, filter?: { and: [{ criteria: [...] }] }, sortCriteria? }`:
 * the entity types (resolved by `typeOf`, which throws for an unknown one), the aspects, the filter as
 * OR of ANDs, the sort fields (`field` or `field:ORDER`). Anything else is refused at its place.
 */
export function readScrollBody(
  body: unknown,
  typeOf: (name: string) => string,
): { types: string[]; aspects: string[]; orFilters?: FacetFilterInput[][]; bodySort: string[] } {
  if (body === undefined || body === null) return { types: [], aspects: [], bodySort: [] };
  const violations: Violation[] = [];
  if (!isObject(body))
    throw new CatalogError('INVALID_INPUT', 'the body must be { entities?, aspects?, filter?, sortCriteria? }', {
      details: [{ path: '/', message: 'must be an object' }],
    });
  for (const key of Object.keys(body))
    if (!['entities', 'aspects', 'filter', 'sortCriteria'].includes(key))
      violations.push({ path: `/${key}`, message: 'is not a member of a scroll body (entities, aspects, filter, sortCriteria)' });
  const strings = (value: unknown, path: string): string[] => {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
      violations.push({ path, message: 'must be a list of strings' });
      return [];
    }
    return value as string[];
  };
  const types = strings(body.entities, '/entities').map((name) => typeOf(name));
  const aspects = strings(body.aspects, '/aspects');
  let orFilters: FacetFilterInput[][] | undefined;
  if (body.filter !== undefined && body.filter !== null) {
    const groups = isObject(body.filter) ? body.filter.and : undefined;
    if (!Array.isArray(groups))
      violations.push({ path: '/filter', message: 'must be { and: [{ criteria: [{ field, values, condition?, negated? }] }] }' });
    else {
      orFilters = groups.map((group: unknown, g) => {
        const criteria = isObject(group) ? group.criteria : undefined;
        if (!Array.isArray(criteria)) {
          violations.push({ path: `/filter/and/${g}/criteria`, message: 'must be a list of criteria' });
          return [];
        }
        return criteria.map((c: unknown, i) => {
          if (!isObject(c) || typeof c.field !== 'string') {
            violations.push({ path: `/filter/and/${g}/criteria/${i}`, message: 'must be { field, values, condition?, negated? }' });
            return { field: '' };
          }
          const condition = typeof c.condition === 'string' ? (CONDITION_NAMES[c.condition] ?? c.condition) : undefined;
          return {
            field: c.field,
            ...(c.values !== undefined ? { values: c.values as string[] } : {}),
            ...(condition !== undefined ? { condition: condition as FacetFilterInput['condition'] } : {}),
            ...(c.negated !== undefined ? { negated: c.negated as boolean } : {}),
          };
        });
      });
    }
  }
  const bodySort: string[] = [];
  if (body.sortCriteria !== undefined && body.sortCriteria !== null) {
    if (!Array.isArray(body.sortCriteria)) violations.push({ path: '/sortCriteria', message: 'must be a list of { field, order }' });
    else
      body.sortCriteria.forEach((c: unknown, i) => {
        if (!isObject(c) || typeof c.field !== 'string')
          violations.push({ path: `/sortCriteria/${i}`, message: 'must be { field, order }' });
        else bodySort.push(c.order === undefined || c.order === 'ASCENDING' ? c.field : `${c.field}:${String(c.order)}`);
      });
  }
  throwIfViolations(violations, 'invalid scroll body');
  return { types, aspects, ...(orFilters ? { orFilters } : {}), bodySort };
}

/** A batch read's body `[{ urn, <aspect name>?: ... }]`: each URN (of `entityType`) with the aspects it names. */
export function batchGetRequest(body: unknown, entityType: string): Map<string, string[]> {
  if (!Array.isArray(body))
    throw new CatalogError('INVALID_INPUT', 'the body must be a list [{ urn, <aspect name>?: {} }]', {
      details: [{ path: '/', message: 'must be an array' }],
    });
  const violations: Violation[] = [];
  const wanted = new Map<string, string[]>();
  body.forEach((item: unknown, i) => {
    const urn = isObject(item) ? item.urn : undefined;
    const problem = urnProblem(urn);
    if (problem !== undefined) violations.push({ path: `/${i}/urn`, message: problem });
    else if (entityTypeOf(urn as string) !== entityType)
      violations.push({
        path: `/${i}/urn`,
        message: `"${String(urn)}" is a ${entityTypeOf(urn as string)} URN, but the address names entity type "${entityType}"`,
      });
    else
      wanted.set(urn as string, [
        ...new Set([...(wanted.get(urn as string) ?? []), ...Object.keys(item as object).filter((k) => k !== 'urn')]),
      ]);
  });
  throwIfViolations(violations, 'invalid batch read');
  return wanted;
}

/**
 * The versions a batch read asks for: `{ urn, <aspect>: { headers: { "If-Version-Match": "N" } } }`,
 * N as `?version=N` takes it (0 the latest, N >= 1 the N-th value written). URN → aspect → N, for N >= 1.
 */
export function batchGetVersions(body: unknown): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  if (!Array.isArray(body)) return out;
  const violations: Violation[] = [];
  body.forEach((item: unknown, i) => {
    if (!isObject(item) || typeof item.urn !== 'string') return;
    for (const [name, member] of Object.entries(item)) {
      if (name === 'urn' || !isObject(member) || !isObject(member.headers)) continue;
      const header = Object.entries(member.headers).find(([key]) => key.toLowerCase() === 'if-version-match');
      if (!header) continue;
      const text = String(header[1]);
      const version = /^\d+$/.test(text) ? Number(text) : NaN;
      if (!Number.isSafeInteger(version)) {
        violations.push({
          path: `/${i}/${name}/headers/${header[0]}`,
          message: 'must be a version number (0 the latest, N >= 1 the N-th value written)',
        });
        continue;
      }
      if (version === 0) continue;
      let versions = out.get(item.urn);
      if (!versions) out.set(item.urn, (versions = new Map()));
      versions.set(name, version);
    }
  });
  throwIfViolations(violations, 'invalid batch read');
  return out;
}

/** One aspect patch of a batch PATCH, and where in the body it came from (`/<index>/<aspect>/value`). */
export interface BatchPatchItem {
  urn: string;
  aspect: string;
  patch: JsonPatchOperation[];
  arrayPrimaryKeys?: Record<string, string[]>;
  at: string;
}

/**
 * A batch PATCH body `[{ urn, <aspect>: { value: { patch: [...], arrayPrimaryKeys? } } }]` as one patch
 * per aspect; problems of the shape at their place in the body. Each URN must be of `entityType`.
 */
export function batchToPatches(body: unknown, entityType: string): BatchPatchItem[] {
  if (!Array.isArray(body)) {
    const message = 'the body must be a list [{ urn, <aspect name>: { value: { patch: [...], arrayPrimaryKeys? } } }]';
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: '/', message: 'must be an array' }] });
  }
  const violations: Violation[] = [];
  const items: BatchPatchItem[] = [];
  body.forEach((entity: unknown, i) => {
    if (!isObject(entity))
      return void violations.push({ path: `/${i}`, message: 'must be an entity { urn, <aspect name>: { value: { patch } } }' });
    const urn = entity.urn;
    const problem = urnProblem(urn);
    if (problem !== undefined) violations.push({ path: `/${i}/urn`, message: problem });
    else if (entityTypeOf(urn as string) !== entityType)
      violations.push({
        path: `/${i}/urn`,
        message: `"${String(urn)}" is a ${entityTypeOf(urn as string)} URN, but the address names entity type "${entityType}"`,
      });
    const names = Object.keys(entity).filter((k) => k !== 'urn');
    if (names.length === 0) violations.push({ path: `/${i}`, message: 'names no aspect to patch' });
    for (const name of names) {
      const read = readEnvelope(entity[name], `/${i}/${name}`, violations);
      if (!read) continue;
      const value = read.value as Record<string, unknown>;
      if (!Array.isArray(value.patch)) {
        violations.push({ path: `/${i}/${name}/value/patch`, message: 'is required: a list of JSON Patch operations' });
        continue;
      }
      items.push({
        urn: urn as string,
        aspect: name,
        patch: value.patch as JsonPatchOperation[],
        ...(value.arrayPrimaryKeys !== undefined ? { arrayPrimaryKeys: value.arrayPrimaryKeys as Record<string, string[]> } : {}),
        at: `/${i}/${name}/value`,
      });
    }
  });
  throwIfViolations(violations, 'invalid patches');
  return items;
}

/** Where a batch patch's canonical item path (`/<k>/...`) lies in the v3 body (for `withPaths`). */
export function patchItemPath(items: readonly BatchPatchItem[]): (path: string) => string {
  return (path) => {
    const m = /^\/(\d+)(\/[^/]+)?(.*)$/.exec(path);
    const item = m ? items[Number(m[1])] : undefined;
    if (!m || !item) return path;
    const entityAt = item.at.split('/').slice(0, 2).join('/');
    const member = m[2] ?? '';
    if (member === '/urn') return `${entityAt}/urn`;
    if (member === '/aspect') return item.at.slice(0, -'/value'.length);
    return member === '/patch' ? `${item.at}/patch${m[3]}` : `${item.at}${m[3]}`;
  };
}

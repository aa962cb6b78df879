import type { Actor } from '../access/actor';
import type { StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { WritePipeline } from '../entities/write-pipeline';
import { CatalogError, isCatalogError, throwIfViolations, withPaths, type Violation } from '../../errors';
import { checkSchema } from '../validation';
import { propertyValueEditSchema } from '../validation/schemas/structured-properties';
import { entityTypeOf, urnProblem } from '../urn';
import { fromPropertyValue } from './definition-rules';
import { loadDefinitions, propertyUrnsOf, type DefinitionInfo } from './lookup';
import { propertyUrnProblem, softDeletedMessage } from './messages';
import { checkAssignments, checkImmutables, storedValues, type AssignmentDraft } from './value-rules';
import { editWriteItem, type PropertyValueEdit } from './value-edits';
import { VALUES_ASPECT, type PropertyAssignment } from './types';

/** One entity's edit: the entity, the properties to set (values replaced whole), the properties to remove. */
export interface PropertyValuesEdit extends PropertyValueEdit {
  urn: string;
}

export interface EditValuesOptions {
  /** Check everything and count what would change; write nothing. */
  dryRun?: boolean;
  /** Entities per atomic commit (default 500, at most 10,000). */
  chunkEntities?: number;
  /** Called after each chunk is committed: entities handled so far of all of them. */
  onChunk?: (progress: { done: number; total: number }) => void;
}

/** What an edit changed (or, in a dry run, would change). */
export interface EditValuesSummary {
  dryRun: boolean;
  /** Edits given (one per entity). */
  entities: number;
  /** Entities whose values change. */
  changed: number;
  /** Entities left as they were (nothing to do, or every value already as asked). */
  unchanged: number;
  /** Properties set to new values (added, or their values changed), over all entities. */
  set: number;
  /** Properties removed (that the entity carried), over all entities. */
  removed: number;
}

export interface PropertyValueEditing {
  /**
   * Sets and removes structured property values on many entities: every edit is checked first against
   * the definitions and what each entity holds (the entity exists, the property exists and is not
   * soft-deleted, entity type, value type, allowed values, cardinality, immutable values); nothing is
   * written when one is bad, and the error lists every violation at `/<index>/urn`,
   * `/<index>/set/<j>/values/<k>`, `/<index>/remove/<j>`. Then the edits are written in atomic chunks
   * through the one write path. EDIT_ENTITY_PROPERTIES.
   */
  editValues(actor: Actor, edits: readonly PropertyValuesEdit[], options?: EditValuesOptions): Promise<EditValuesSummary>;
}

const EDIT_CHUNK_ENTITIES = 500;
const MAX_CHUNK_ENTITIES = 10_000;
/** Edits one call takes (they are checked together before the first chunk is written). */
const MAX_EDIT_ENTITIES = 100_000;
const MESSAGE = 'invalid structured property value edits';

interface CheckedEdit {
  index: number;
  urn: string;
  edit: PropertyValuesEdit;
}

/** What an edit changes on an entity holding `visible`. */
function changesOf(visible: readonly PropertyAssignment[], edit: PropertyValueEdit): { set: number; removed: number } {
  let set = 0;
  let removed = 0;
  for (const { propertyUrn, values } of edit.set ?? []) {
    const before = visible.find((a) => a.propertyUrn === propertyUrn);
    const same = before && JSON.stringify(before.values.map(fromPropertyValue)) === JSON.stringify(values.map(fromPropertyValue));
    if (!same) set++;
  }
  for (const propertyUrn of edit.remove ?? []) if (visible.some((a) => a.propertyUrn === propertyUrn)) removed++;
  return { set, removed };
}

/** The assignments an entity would hold after the edit, as drafts whose paths name the edit (for the immutable check). */
function draftsAfter(visible: readonly PropertyAssignment[], { index, edit }: CheckedEdit): AssignmentDraft[] {
  const setDrafts = (edit.set ?? []).map((s, j) => ({
    propertyUrn: s.propertyUrn,
    values: s.values.map(fromPropertyValue),
    path: `/${index}/set/${j}`,
    urnPath: `/${index}/set/${j}/propertyUrn`,
  }));
  const touched = new Set([...(edit.remove ?? []), ...setDrafts.map((d) => d.propertyUrn)]);
  const kept = visible
    .filter((a) => !touched.has(a.propertyUrn))
    .map((a) => ({ propertyUrn: a.propertyUrn, values: a.values.map(fromPropertyValue), path: `/${index}`, urnPath: `/${index}` }));
  return [...kept, ...setDrafts];
}

/** The first path segment as a number (the edit's index), for listing violations in the order of the edits. */
const indexOf = (path: string): number => Number(/^\/(\d+)/.exec(path)?.[1] ?? -1);

/**
 * A violation the write path reports under an edit's values patch (`/<i>/properties/<token>...`,
 * `/<i>/patch/...`) said in the terms of the edit (`/<i>/set/<j>...`, `/<i>/remove/<j>`).
 */
function editPath(path: string, edits: readonly PropertyValuesEdit[]): string {
  const match = /^\/(\d+)\/properties\/([^/]*)(.*)$/.exec(path);
  if (!match) return /^\/\d+/.exec(path)?.[0] ?? path;
  const index = Number(match[1]);
  const urn = match[2]!.replace(/~1/g, '/').replace(/~0/g, '~');
  const edit = edits[index];
  const j = edit?.set?.findIndex((s) => s.propertyUrn === urn) ?? -1;
  if (j >= 0) return `/${index}/set/${j}${match[3]}`;
  const r = edit?.remove?.indexOf(urn) ?? -1;
  return r >= 0 ? `/${index}/remove/${r}` : `/${index}`;
}

function chunksOf<T>(list: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < list.length; start += size) chunks.push(list.slice(start, start + size));
  return chunks;
}

/**
 * `catalog.properties.editValues`: the stewardship edit of many entities' values (the CSV import of the
 * command line). Writes go through the one write path (`pipeline`), each entity's edit as one values
 * patch, so the write re-checks every rule under its own read.
 */
export function createValueEditing(ctx: CatalogContext, pipeline: Pick<WritePipeline, 'admit' | 'write'>): PropertyValueEditing {
  /** Structural checks of each edit; the edits worth checking further. */
  function readEdits(edits: readonly PropertyValuesEdit[], violations: Violation[]): CheckedEdit[] {
    const checked: CheckedEdit[] = [];
    const firstOf = new Map<string, number>();
    edits.forEach((edit, index) => {
      const shape = checkSchema(propertyValueEditSchema, edit, `/${index}`);
      if (shape.length) return void violations.push(...shape);
      const urnPath = `/${index}/urn`;
      const problem = urnProblem(edit.urn);
      if (problem) return void violations.push({ path: urnPath, message: problem });
      const entityType = entityTypeOf(edit.urn);
      if (!ctx.registry.hasEntityType(entityType))
        return void violations.push({ path: urnPath, message: `unknown entity type "${entityType}"` });
      if (!ctx.registry.entityType(entityType).aspects.includes(VALUES_ASPECT))
        return void violations.push({ path: urnPath, message: `${entityType} entities carry no structured properties` });
      const first = firstOf.get(edit.urn);
      if (first !== undefined)
        return void violations.push({ path: urnPath, message: `${edit.urn} is edited at /${first} already (one edit per entity)` });
      firstOf.set(edit.urn, index);
      const setUrns = new Set((edit.set ?? []).map((s) => s.propertyUrn));
      const removed = new Set<string>();
      (edit.remove ?? []).forEach((propertyUrn, j) => {
        const path = `/${index}/remove/${j}`;
        const notAProperty = propertyUrnProblem(propertyUrn);
        if (notAProperty) violations.push({ path, message: notAProperty });
        else if (setUrns.has(propertyUrn)) violations.push({ path, message: `${propertyUrn} is both set and removed` });
        else if (removed.has(propertyUrn)) violations.push({ path, message: `${propertyUrn} is removed twice` });
        removed.add(propertyUrn);
      });
      checked.push({ index, urn: edit.urn, edit });
    });
    return checked;
  }

  /** Definitions of the edits: what is set must fit, what is removed must exist and not be soft-deleted. */
  function checkDefinitions(
    checked: readonly CheckedEdit[],
    definitions: ReadonlyMap<string, DefinitionInfo>,
    violations: Violation[],
  ): void {
    for (const { index, urn, edit } of checked) {
      const drafts = (edit.set ?? []).map((s, j) => ({
        propertyUrn: s.propertyUrn,
        values: s.values.map(fromPropertyValue),
        path: `/${index}/set/${j}`,
        urnPath: `/${index}/set/${j}/propertyUrn`,
      }));
      checkAssignments(urn, drafts, definitions, violations);
      (edit.remove ?? []).forEach((propertyUrn, j) => {
        if (propertyUrnProblem(propertyUrn)) return;
        const info = definitions.get(propertyUrn);
        const path = `/${index}/remove/${j}`;
        if (!info) violations.push({ path, message: `structured property ${propertyUrn} does not exist` });
        else if (info.removed) violations.push({ path, message: softDeletedMessage(propertyUrn, 'removing its values') });
      });
    }
  }

  async function ensureDefinitions(definitions: Map<string, DefinitionInfo>, entities: readonly StoredEntity[]): Promise<void> {
    const missing = [...propertyUrnsOf(entities)].filter((u) => !definitions.has(u));
    for (const [urn, info] of await loadDefinitions(ctx.adapter, missing)) definitions.set(urn, info);
  }

  return {
    async editValues(actor, edits, options = {}) {
      // Admitted by the write path before anything is read; its writes are not checked again.
      const admitted = await pipeline.admit(actor, ['EDIT_ENTITY_PROPERTIES']);
      if (!Array.isArray(edits))
        throw new CatalogError('INVALID_INPUT', 'the edits must be a list of { urn, set?, remove? }', {
          details: [{ path: '/', message: 'must be an array' }],
        });
      if (edits.length > MAX_EDIT_ENTITIES) {
        const message = `at most ${MAX_EDIT_ENTITIES} edits at once, got ${edits.length}`;
        throw new CatalogError('INVALID_INPUT', message, { details: [{ path: '/', message }] });
      }
      const size = options.chunkEntities ?? EDIT_CHUNK_ENTITIES;
      if (!Number.isInteger(size) || size < 1 || size > MAX_CHUNK_ENTITIES) {
        const message = `must be a whole number from 1 to ${MAX_CHUNK_ENTITIES}`;
        throw new CatalogError('INVALID_INPUT', `chunkEntities ${message}`, { details: [{ path: 'chunkEntities', message }] });
      }

      const violations: Violation[] = [];
      const checked = readEdits(edits, violations);
      const definitions = await loadDefinitions(
        ctx.adapter,
        checked
          .flatMap(({ edit }) => [...(edit.set ?? []).map((s) => s.propertyUrn), ...(edit.remove ?? [])])
          .filter((u) => !propertyUrnProblem(u)),
      );
      checkDefinitions(checked, definitions, violations);

      // What depends on the stored state: the entity exists, immutable values stay. Checked for every
      // chunk before the first is written.
      const summary: EditValuesSummary = {
        dryRun: options.dryRun === true,
        entities: edits.length,
        changed: 0,
        unchanged: 0,
        set: 0,
        removed: 0,
      };
      const count = (visible: readonly PropertyAssignment[], edit: PropertyValueEdit): void => {
        const { set, removed } = changesOf(visible, edit);
        summary.set += set;
        summary.removed += removed;
        if (set + removed > 0) summary.changed++;
      };
      // ACCESS HOOK (metadata policies): every chunk's items are checked on this read before the first is written.
      // (Only an actor holding the privilege just per resource has items to check: the admission says.)
      const access = admitted.perResource.has('EDIT_ENTITY_PROPERTIES')
        ? await ctx.authorizer.authorizeBatch(admitted.principal, ['EDIT_ENTITY_PROPERTIES'])
        : undefined;
      for (const chunk of chunksOf(checked, size)) {
        const stored = await ctx.adapter.readEntities(
          chunk.map((c) => c.urn),
          [VALUES_ASPECT],
        );
        await ensureDefinitions(definitions, stored);
        const byUrn = new Map(stored.map((e) => [e.urn, e] as const));
        if (access)
          await access.begin(
            byUrn,
            chunk.map((c) => c.urn),
            { keepRefusals: true },
          );
        for (const item of chunk) {
          const entity = byUrn.get(item.urn);
          if (!entity) {
            violations.push({ path: `/${item.index}/urn`, message: `${item.urn} does not exist` });
            continue;
          }
          access?.check({ urn: item.urn, entityType: entity.entityType, path: `/${item.index}` }, 'EDIT_ENTITY_PROPERTIES', entity, [
            ...(item.edit.set ?? []).map((s) => s.propertyUrn),
            ...(item.edit.remove ?? []),
          ]);
          const { visible } = storedValues(entity, definitions);
          const removalPath = (propertyUrn: string): string => `/${item.index}/remove/${(item.edit.remove ?? []).indexOf(propertyUrn)}`;
          checkImmutables(visible, draftsAfter(visible, item), definitions, removalPath, violations);
          count(visible, item.edit);
        }
      }
      access?.throwIfRefused();
      violations.sort((a, b) => indexOf(a.path) - indexOf(b.path));
      throwIfViolations(violations, MESSAGE);
      if (summary.dryRun) {
        summary.unchanged = summary.entities - summary.changed;
        return summary;
      }

      // The write: each chunk one atomic commit; the write path checks every rule again under its own read.
      summary.changed = summary.set = summary.removed = 0;
      let done = 0;
      for (const chunk of chunksOf(checked, size)) {
        const items = chunk
          .filter(({ edit }) => (edit.set?.length ?? 0) + (edit.remove?.length ?? 0) > 0)
          .map(({ index, urn, edit }) => editWriteItem(urn, edit, `/${index}`));
        if (items.length) {
          let before: ReadonlyMap<string, StoredEntity | undefined>;
          try {
            ({ before } = await pipeline.write(admitted, items, { message: MESSAGE }));
          } catch (error) {
            const mapped = withPaths(error, (path) => editPath(path, edits));
            if (done === 0 || !isCatalogError(mapped)) throw mapped;
            throw new CatalogError(mapped.code, `${mapped.message} (the ${done} entities before this chunk were written)`, {
              details: mapped.details,
              cause: mapped,
            });
          }
          const entities = [...before.values()].filter((e): e is StoredEntity => e !== undefined);
          await ensureDefinitions(definitions, entities);
          for (const { urn, edit } of chunk) count(storedValues(before.get(urn), definitions).visible, edit);
        }
        done += chunk.length;
        options.onChunk?.({ done, total: checked.length });
      }
      summary.unchanged = summary.entities - summary.changed;
      return summary;
    },
  };
}

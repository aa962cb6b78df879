import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import type { ReadTransform } from '../entities/owner';
import type { Admission, WritePipeline, WriteItem } from '../entities/write-pipeline';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { loadDefinitions, propertyUrnsOf, stampedAssignmentsOf } from './lookup';
import { propertyUrnProblem } from './messages';
import { checkAssignments, checkImmutables, storedValues, type AssignmentDraft } from './value-rules';
import { VALUES_ASPECT, type PropertyAssignment } from './types';
import { parseUrn } from '../urn';
import { readValuesInput, type ValueEdit } from './value-input';
import { ensureDefinitions } from './value-owner';

const BULK_CHUNK = 500;

/** What a transport's decoder already reported: the rules check only the property of a `malformed` element. */
export interface DecoderReport {
  violations: readonly Violation[];
  malformed: ReadonlySet<number>;
}

/** Structured property values on entities: read, replace all, remove some, patch, bulk replace. */
export class PropertyValueService {
  constructor(
    private readonly ctx: CatalogContext,
    /** What readers see of stored values (values of missing, soft-deleted or superseded definitions hidden). */
    private readonly visible: ReadTransform,
    /** The one write path: it authenticates and authorizes each write, once. */
    private readonly pipeline: WritePipeline,
  ) {}

  /** The actor admitted by the write path (EDIT_ENTITY_PROPERTIES) before the input is read. */
  private editor(actor: unknown): Promise<Admission> {
    return this.pipeline.admit(actor, ['EDIT_ENTITY_PROPERTIES']);
  }

  /** INVALID_INPUT unless the URN names an entity type that carries structured properties. */
  private entityUrn(urn: unknown, path: string): string {
    const parsed = parseUrn(urn, path);
    const spec = this.ctx.registry.entityType(parsed.entityType, path);
    if (!spec.aspects.includes(VALUES_ASPECT)) {
      const message = `${parsed.entityType} entities carry no structured properties`;
      throw new CatalogError('INVALID_INPUT', `${path}: ${message}`, { details: [{ path, message }] });
    }
    return parsed.urn;
  }

  /** The entity's visible structured properties ([] when it has none or does not exist). */
  async get(actor: Actor, entityUrn: string): Promise<PropertyAssignment[]> {
    await this.ctx.authenticate(actor);
    const urn = this.entityUrn(entityUrn, '/urn');
    const [entity] = await this.visible(await this.ctx.adapter.readEntities([urn], [VALUES_ASPECT]));
    // The domain's answer says who set each property and when (the aspect itself reads back as written).
    return stampedAssignmentsOf(entity?.aspects[VALUES_ASPECT]);
  }

  /** Replaces all of the entity's structured properties; returns the properties it has afterwards. */
  async upsert(actor: Actor, entityUrn: string, input: unknown, decoded?: DecoderReport): Promise<PropertyAssignment[]> {
    const admitted = await this.editor(actor);
    const urn = this.entityUrn(entityUrn, '/urn');
    const violations: Violation[] = [...(decoded?.violations ?? [])];
    const drafts = readValuesInput(input, violations, '', decoded?.malformed);
    return this.write(admitted, urn, { kind: 'replace', drafts, prior: violations });
  }

  /** Removes the named properties from the entity (absent ones are ignored); returns the properties left. */
  async remove(actor: Actor, entityUrn: string, propertyUrns: readonly string[]): Promise<PropertyAssignment[]> {
    const admitted = await this.editor(actor);
    const urn = this.entityUrn(entityUrn, '/assetUrn');
    const violations: Violation[] = [];
    if (!Array.isArray(propertyUrns))
      violations.push({ path: '/structuredPropertyUrns', message: 'must be a list of structured property URNs' });
    else
      propertyUrns.forEach((p, i) => {
        const problem = propertyUrnProblem(p);
        if (problem) violations.push({ path: `/structuredPropertyUrns/${i}`, message: problem });
      });
    throwIfViolations(violations, `invalid removal of structured properties from ${urn}`);
    return this.write(admitted, urn, { kind: 'remove', propertyUrns });
  }

  /** JSON Patch on the entity's structured properties (see property-patch.ts); returns the properties left. */
  async patch(actor: Actor, entityUrn: string, request: unknown): Promise<PropertyAssignment[]> {
    const admitted = await this.editor(actor);
    const urn = this.entityUrn(entityUrn, '/urn');
    return this.write(admitted, urn, { kind: 'patch', request });
  }

  /**
   * Replaces the structured properties of many entities: every item is checked first (nothing is
   * written when one is bad; the error lists every violation with its item index), then written in
   * atomic chunks of 500 entities.
   */
  async upsertMany(
    actor: Actor,
    items: ReadonlyArray<{ urn: string; properties: unknown }>,
  ): Promise<Array<{ urn: string; properties: PropertyAssignment[] }>> {
    const admitted = await this.editor(actor);
    const violations: Violation[] = [];
    const wishes: Array<{ urn: string; drafts: AssignmentDraft[] }> = [];
    const seen = new Set<string>();
    items.forEach((item, i) => {
      let urn: string;
      try {
        urn = this.entityUrn(item?.urn, `/${i}/urn`);
      } catch (error) {
        if (error instanceof CatalogError) violations.push(...error.details);
        return;
      }
      if (seen.has(urn)) violations.push({ path: `/${i}/urn`, message: `${urn} appears more than once` });
      seen.add(urn);
      wishes.push({ urn, drafts: readValuesInput({ properties: item.properties }, violations, `/${i}`) });
    });
    const definitions = await loadDefinitions(
      this.ctx.adapter,
      wishes.flatMap((w) => w.drafts.map((d) => d.propertyUrn)),
    );
    for (const wish of wishes) checkAssignments(wish.urn, wish.drafts, definitions, violations);
    throwIfViolations(violations, 'invalid structured property values');
    // Immutable values depend on what is stored: check them all before the first chunk is written.
    for (let start = 0; start < wishes.length; start += BULK_CHUNK) {
      const chunk = wishes.slice(start, start + BULK_CHUNK);
      const entities = await this.ctx.adapter.readEntities(
        chunk.map((w) => w.urn),
        [VALUES_ASPECT],
      );
      await ensureDefinitions(this.ctx, definitions, propertyUrnsOf(entities));
      const byUrn = new Map(entities.map((e) => [e.urn, e] as const));
      for (const wish of chunk) {
        const stored = storedValues(byUrn.get(wish.urn), definitions);
        checkImmutables(stored.visible, wish.drafts, definitions, () => `/${wishes.indexOf(wish)}/properties`, violations);
      }
    }
    throwIfViolations(violations, 'invalid structured property values');
    // Written through the write path in atomic chunks: the values' owner plans each entity's edit in its unit of work.
    const edits = wishes.map((wish): ValueEdit => ({ kind: 'replace', drafts: wish.drafts }));
    const writes = wishes.map((wish, i): WriteItem => ({
      op: 'edit',
      urn: wish.urn,
      aspect: VALUES_ASPECT,
      edit: edits[i],
      path: `/${i}`,
    }));
    const { results } = await this.pipeline.write(admitted, writes, {
      message: 'invalid structured property values',
      chunkEntities: BULK_CHUNK,
    });
    return wishes.map((wish, i) => ({ urn: wish.urn, properties: (results[i] as PropertyAssignment[] | undefined) ?? [] }));
  }

  /** One entity's edit through the write path (its owner plans it in the unit of work); the visible properties after it. */
  private async write(admitted: Admission, urn: string, edit: ValueEdit): Promise<PropertyAssignment[]> {
    const item: WriteItem = { op: 'edit', urn, aspect: VALUES_ASPECT, edit, path: '' };
    const { results } = await this.pipeline.write(admitted, [item], { message: `invalid structured properties for ${urn}` });
    return (results[0] as PropertyAssignment[] | undefined) ?? [];
  }
}

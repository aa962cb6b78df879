import { actorUrn, type Actor } from '../access/actor';
import type { Privilege } from '../access/privileges';
import { changedProperties, type ItemAccess } from '../access/item-access';
import type {
  AspectMatchQuery,
  JsonObject,
  NewJob,
  StoredAspect,
  StoredEntity,
  TimeseriesIndexRef,
  TimeseriesRow,
  WriteBatch,
} from '../../adapter/types';
import type { CatalogContext } from '../context';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { entityTypeOf } from '../urn';
import { sameJson } from './json-equal';
import { applyJsonPatch, type ArrayPrimaryKeys, type JsonPatchOperation } from './json-patch';
import type { AspectOwner, DomainOwners, EntityTypeOwner, OwnedChange, OwnedItem, OwnerBatch } from './owner';
import { keptSystemMetadata, withKeptSystemMetadata } from './system-metadata';
import type { AspectChange, EntityPlan } from './write-plan';
import { EntityWriter, type ChangeRecording } from './writer';

/**
 * The one write path: every write of an aspect (an upsert, a JSON patch, a delete, a timeseries row)
 * and every deletion of an entity inside a batch comes here as a canonical item, whatever route it took.
 *
 * 1. each item goes to the owner of its aspect (or the generic rules: the aspect's schema);
 * 2. every privilege the batch needs is checked, then every owner checks its items (nothing is
 *    written when one is bad; the error lists every violation under the item's path);
 * 3. the items are planned inside the unit of work (`EntityWriter.write`): the entities are read once,
 *    each item is planned on the entity as the batch's earlier items left it, and one commit writes
 *    the aspects, the jobs and the timeseries rows.
 *
 * A batch is one unit of work unless the caller asks for chunks, which always hold whole entities.
 *
 * The pipeline is the only way to the writer (`EntityWriter`, the unit of work): a user's write
 * (`write`, authenticated and authorized here, once) and the catalog's own bookkeeping (`bookkeep`: a
 * job's progress, expired tokens removed, stale values cleaned up, a job queued), which no user makes
 * and so nothing authorizes, planned by the same owners as their typed edits.
 */

/** The aspect of structured property values (whose per-property rights the access check reads). */
const VALUES_ASPECT = 'structuredProperties';

export type WriteItem =
  | {
      op: 'upsert';
      urn: string;
      aspect: string;
      value: unknown;
      /** Where the value sits in the canonical input. */
      path: string;
      systemMetadata?: JsonObject;
      onlyIfAbsent?: 'aspect' | 'entity';
      /** Where a refused `onlyIfAbsent` is reported. */
      presencePath?: string;
      /** The caller checked the value against the aspect's schema already (a generic aspect is not checked twice). */
      schemaChecked?: boolean;
    }
  | {
      op: 'patch';
      urn: string;
      aspect: string;
      operations: readonly JsonPatchOperation[];
      arrayPrimaryKeys?: ArrayPrimaryKeys;
      /** Where the patch request `{ patch, arrayPrimaryKeys }` sits (what an owner reports under). */
      path: string;
      /** Where the operations sit (`<patchPath>/<i>` is operation i). */
      patchPath: string;
      /** Where violations of the patched value are reported. */
      valuePath: string;
      /** Skip the item when the entity is not there (background edits of entities that may be gone meanwhile). */
      onlyIfPresent?: boolean;
    }
  | { op: 'delete'; urn: string; aspect: string; path: string }
  | {
      op: 'edit';
      urn: string;
      aspect: string;
      /**
       * An edit in the owner's own canonical terms, built by the owner's domain (never decoded from a
       * wire body): what neither a whole value nor a JSON patch says (create only when absent, append
       * to a list without duplicates). Planned by the owner on the entity as the unit of work reads it.
       */
      edit: unknown;
      path: string;
    }
  | { op: 'deleteEntity'; urn: string; path: string };

export interface PipelineOptions {
  /** The message of an INVALID_INPUT refusal. */
  message: string;
  /** Commit at most this many entities at once (each chunk atomic, whole entities); one commit when left out. */
  chunkEntities?: number;
  /** Problems the caller found already (its structural checks): reported with the owners' in one answer. */
  violations?: readonly Violation[];
  /** Plan and check everything under a real read, then write nothing: `after` says what a write would leave. */
  dryRun?: boolean;
  /** Jobs completed by the commit (a background job's chunk: its effect and its completion are one step); one chunk only. */
  completeJobs?: WriteBatch['completeJobs'];
  /** One more entity written in the same commit (a background job's own record); one chunk only. */
  alongside?: AlongsideWrite;
  /**
   * Privileges the route needs whatever its items (a route that refuses before it has an item, a bad
   * URN say): checked with the items' own, once.
   */
  requires?: readonly Privilege[];
  /** Jobs queued in the same commit; one chunk only. */
  jobs?: readonly NewJob[];
  /**
   * Compare first (the re-ingest of unchanged metadata): a chunk's plain upserts are compared with the
   * stored aspects (the adapter's `matchAspects`) before its unit of work; an entity whose every item
   * holds its value already (and whose owners keep it as it is) is left out of the unit of work, of
   * `after` and of `before`; a chunk of such entities alone writes and reads nothing more. For callers
   * that read neither for such entities. Only for an actor holding the batch's privileges everywhere.
   */
  compareFirst?: boolean;
}

/**
 * An actor the pipeline authenticated and found to hold `granted` (`WritePipeline.admit`): a route that
 * must refuse before it reads anything (its own checks read stored state) is admitted first, and its
 * write is then not checked again for these privileges.
 */
export interface Admission {
  readonly principal: Actor;
  readonly who: string;
  readonly granted: ReadonlySet<Privilege>;
  /**
   * Those of `granted` the actor holds only through policies with resources (docs/access.md): the
   * write still checks each item that needs one of them on the entity it changes.
   */
  readonly perResource: ReadonlySet<Privilege>;
}

/** Who writes: a user (authorized here) or the catalog's bookkeeping (`system`). */
interface Caller {
  principal: Actor;
  system: boolean;
  granted: ReadonlySet<Privilege> | undefined;
  perResource: ReadonlySet<Privilege> | undefined;
}

/**
 * An admission this pipeline made: a caller cannot make one up, as only this class can give an object
 * its private field. (Not a WeakSet of them: a write makes one, and a young-generation collection keeps
 * every weak collection's new entries alive until a full collection, so each write's admission and all
 * it holds would be promoted to the old generation.)
 */
class MadeAdmission implements Admission {
  readonly #made = true;
  constructor(
    readonly principal: Actor,
    readonly who: string,
    readonly granted: ReadonlySet<Privilege>,
    readonly perResource: ReadonlySet<Privilege>,
  ) {
    Object.freeze(this);
  }

  static holds(actor: unknown): actor is Admission {
    return typeof actor === 'object' && actor !== null && #made in actor;
  }
}

function isAdmission(actor: unknown): actor is Admission {
  return MadeAdmission.holds(actor);
}

/**
 * An entity the caller writes beside the items, in the same unit of work: read with them and planned
 * after them, on what the read found of the items' entities. `plan` may throw to abandon the commit.
 */
interface AlongsideWrite {
  urn: string;
  plan(current: ReadonlyMap<string, StoredEntity>, now: number): { put?: Record<string, AspectChange>; jobs?: NewJob[] } | undefined;
}

/** Each entity of the batch after the write (undefined: deleted or never there) and as it was read. */
export interface WriteOutcome {
  after: Map<string, StoredEntity | undefined>;
  before: Map<string, StoredEntity | undefined>;
  /** What each item's owner answered (`OwnedChange.result`), by the item's index; as planned by the last unit of work that ran. */
  results: unknown[];
}

/**
 * A write's outcome; `before` is made only for a caller that asks. A class, not an object literal with
 * a getter: a literal's getter is a new closure per write, so each outcome would get a hidden class of
 * its own, made in the old generation and pointing at the write's objects, and every young-generation
 * collection would keep them all (promoted, until a full collection): long collections on the host's
 * event loop.
 */
class PipelineOutcome implements WriteOutcome {
  #before: Map<string, StoredEntity | undefined> | undefined;

  constructor(
    readonly after: Map<string, StoredEntity | undefined>,
    /** Each entity as read, in the order of `after`. */
    private readonly reads: ReadonlyArray<StoredEntity | undefined>,
    readonly results: unknown[],
  ) {}

  get before(): Map<string, StoredEntity | undefined> {
    if (!this.#before) {
      const before = new Map<string, StoredEntity | undefined>();
      let i = 0;
      for (const urn of this.after.keys()) before.set(urn, this.reads[i++]);
      this.#before = before;
    }
    return this.#before;
  }
}

/**
 * One item of a write, routed to its owner. A class, not an object literal: a call's records live for the
 * whole call, and literals of a site that a young-generation collection finds all alive are then made in
 * the old generation (V8's pretenuring), where they keep what they point at through every collection.
 */
class Routed {
  /** The item as its owner gets it. */
  owned: OwnedItem | undefined = undefined;
  /** The item's entity in its chunk (set when the chunk is cut). */
  slot: Slot | undefined = undefined;

  constructor(
    readonly item: WriteItem,
    readonly index: number,
    readonly entityType: string,
    readonly owner: AspectOwner | undefined,
    readonly entityOwner: EntityTypeOwner | undefined,
    /** The privilege the item needs (undefined: its owner's service authorized it). */
    readonly privilege: Privilege | undefined,
  ) {}
}

/** Items of whole entities written by one unit of work, and their entities in the order of their first item. */
interface Chunk {
  items: Routed[];
  slots: Slot[];
}

/**
 * One entity of a chunk while its unit of work is planned: as it was read, as the chunk's earlier
 * items left it, and what the plan does to it.
 */
class Slot {
  /** The entity as the unit of work read it. */
  read: StoredEntity | undefined = undefined;
  /** The entity as the chunk's earlier items left it, apart from what `draft` holds since (`dirty`). */
  base: StoredEntity | undefined = undefined;
  /** Whether `draft` holds changes that `base` does not show yet. */
  dirty = false;
  /** Aspects deleted since `base` was made. */
  gone: string[] | undefined = undefined;
  draft: Draft | undefined = undefined;

  constructor(
    readonly urn: string,
    readonly entityType: string,
  ) {}
}

/** Per-entity plan being built inside the unit of work. */
interface Draft {
  put: Record<string, AspectChange>;
  delete?: Set<string>;
  deleteEntity: boolean;
}

/** Whether the change is `{ value }` alone. */
function hasOnlyValue(change: AspectChange): boolean {
  for (const key in change) if (key !== 'value' && Object.hasOwn(change, key)) return false;
  return true;
}

/** Whether the record has an own key (without listing them). */
function hasKeys(record: object): boolean {
  for (const key in record) if (Object.hasOwn(record, key)) return true;
  return false;
}

export class WritePipeline {
  private readonly writer: EntityWriter;
  private readonly aspectOwners: readonly AspectOwner[];
  private readonly entityOwners = new Map<string, EntityTypeOwner>();
  /** Entity type → aspect → its owner (null: generic); bounded by the registry's types and aspects. */
  private readonly ownerCache = new Map<string, Map<string, AspectOwner | null>>();

  constructor(
    private readonly ctx: CatalogContext,
    owners: readonly DomainOwners[],
    /** What each commit records besides the change (change events, earlier versions). */
    recording: ChangeRecording = { events: true, versions: true },
  ) {
    this.writer = new EntityWriter(ctx.adapter, ctx.registry, ctx.clock, () => ctx.jobs.kick(), recording);
    this.aspectOwners = owners.flatMap((o) => o.aspects ?? []);
    for (const o of owners) for (const e of o.entityTypes ?? []) this.entityOwners.set(e.entityType, e);
  }

  /** The owner of an aspect on an entity type; undefined when the generic rules apply. */
  ownerOf(entityType: string, aspect: string): AspectOwner | undefined {
    let owner = this.ownerCache.get(entityType)?.get(aspect);
    if (owner === undefined) {
      owner = this.aspectOwners.find((o) => o.governs(entityType, aspect)) ?? null;
      if (this.ctx.registry.hasEntityType(entityType) && this.ctx.registry.hasAspect(aspect)) {
        let byAspect = this.ownerCache.get(entityType);
        if (!byAspect) this.ownerCache.set(entityType, (byAspect = new Map()));
        byAspect.set(aspect, owner);
      }
    }
    return owner ?? undefined;
  }

  /** Whether commits carry change events (the `changes.enabled` option). */
  get recordsEvents(): boolean {
    return this.writer.recordsEvents;
  }

  /**
   * Authenticates the actor and checks the privileges a route needs before it reads anything; its
   * `write` with the admission checks only what the items need beyond them.
   */
  async admit(actor: unknown, privileges: readonly Privilege[]): Promise<Admission> {
    // An admission asked for more is checked only for what it does not hold yet.
    const held = isAdmission(actor) ? actor.granted : undefined;
    const principal = isAdmission(actor) ? actor.principal : await this.ctx.principal(actor);
    const wanted = privileges.filter((privilege) => !held?.has(privilege));
    // FORBIDDEN when one is held nowhere; those held only per resource are noted for the write's per-item check.
    const access = wanted.length ? await this.ctx.authorizer.authorizeBatch(principal, wanted) : undefined;
    const perResource = new Set(isAdmission(actor) ? actor.perResource : []);
    if (access) for (const privilege of wanted) if (access.checks(privilege)) perResource.add(privilege);
    const granted = new Set([...(held ?? []), ...privileges]);
    return new MadeAdmission(principal, actorUrn(principal), granted, perResource);
  }

  /**
   * The catalog's own bookkeeping, written as `stampAs` (the system actor, or the user a job works for):
   * no user's write, so nothing is authenticated or authorized. The items are owners' edits (each owner
   * plans its bookkeeping edits only when they come this way) or entity deletions; `options.jobs`
   * queues jobs, alone or with them.
   */
  async bookkeep(stampAs: string, items: readonly WriteItem[], options: PipelineOptions): Promise<WriteOutcome> {
    return this.run({ principal: stampAs, system: true, granted: undefined, perResource: undefined }, items, options);
  }

  /** The privilege a write of the aspect needs. */
  privilegeOf(entityType: string, aspect: string): Privilege {
    return this.ownerOf(entityType, aspect)?.privilege(entityType, aspect) ?? 'EDIT_ENTITY';
  }

  /**
   * Checks, authorizes and writes the items. Items are structurally sound already (URN, entity type,
   * aspect of the type): the caller checked them with its own paths. Returns each written entity as it
   * is after the write (undefined when deleted).
   */
  async write(actor: Actor | Admission, items: readonly WriteItem[], options: PipelineOptions): Promise<WriteOutcome> {
    if (isAdmission(actor))
      return this.run(
        { principal: actor.principal, system: false, granted: actor.granted, perResource: actor.perResource },
        items,
        options,
      );
    return this.run(
      { principal: await this.ctx.principal(actor), system: false, granted: undefined, perResource: undefined },
      items,
      options,
    );
  }

  private async run(caller: Caller, items: readonly WriteItem[], options: PipelineOptions): Promise<WriteOutcome> {
    const { principal, system } = caller;
    const actor = principal;
    const violations: Violation[] = options.violations ? [...options.violations] : [];
    const routed: Routed[] = new Array<Routed>(items.length);
    // Privileges first: a refusal comes before any owner reads or checks.
    const needs = new Set<Privilege>(options.requires ?? []);
    // An entity's items come together as a rule: its type is read from its URN once.
    let lastUrn: string | undefined;
    let entityType = '';
    for (let index = 0; index < items.length; index++) {
      const item = items[index]!;
      if (item.urn !== lastUrn) {
        lastUrn = item.urn;
        entityType = entityTypeOf(item.urn);
      }
      if (item.op === 'deleteEntity') {
        const entityOwner = this.entityOwners.get(entityType);
        const privilege = entityOwner?.deletePrivilege ?? 'EDIT_ENTITY';
        needs.add(privilege);
        routed[index] = new Routed(item, index, entityType, undefined, entityOwner, privilege);
        continue;
      }
      const owner = this.ownerOf(entityType, item.aspect);
      let privilege: Privilege | undefined = 'EDIT_ENTITY';
      if (owner) {
        privilege = owner.privilege(entityType, item.aspect, item.op);
        if (privilege) needs.add(privilege);
      } else {
        needs.add('EDIT_ENTITY');
        // The path is made only when the value has problems to report under it.
        if (item.op === 'upsert' && !item.schemaChecked && !this.ctx.registry.passesAspectSchema(item.aspect, item.value)) {
          const problems = this.ctx.registry.validateAspect(item.aspect, item.value, item.path);
          for (const problem of problems) violations.push(problem);
        }
        if (item.op === 'edit') throw new Error(`internal: an edit of "${item.aspect}", which no owner governs`);
        if (this.ctx.registry.aspect(item.aspect).timeseries)
          violations.push({ path: item.path, message: `"${item.aspect}" is a timeseries aspect: its rows cannot be appended here` });
      }
      routed[index] = new Routed(item, index, entityType, owner, undefined, privilege);
    }
    // ACCESS HOOK (metadata policies, docs/access.md): refused when the actor holds a needed privilege
    // nowhere; when it holds one only through policies with resources, `access` checks each item in the
    // unit of work (`plan`), on the entity as read there, and refuses the whole batch for one bad item.
    const access = system ? undefined : await this.authorize(principal, needs, caller);
    const byOwner = new Map<AspectOwner, OwnedItem[]>();
    for (const r of routed) {
      if (!r.owner || r.item.op === 'deleteEntity') continue;
      r.owned = toOwnedItem(r.item, r.index, r.entityType, system);
      let list = byOwner.get(r.owner);
      if (!list) byOwner.set(r.owner, (list = []));
      list.push(r.owned);
    }
    const chunks = chunksOf(routed, options.chunkEntities);
    const context = { units: chunks.length };
    const batches = new Map<AspectOwner, OwnerBatch>();
    for (const [owner, list] of byOwner) batches.set(owner, await owner.prepare(principal, list, violations, context));
    throwIfViolations(violations, options.message);
    // ACCESS HOOK: a batch of several units of work is checked whole (a dry run of every chunk) before the first commits.
    if (access && chunks.length > 1 && options.dryRun !== true) await this.run(caller, items, { ...options, dryRun: true });

    const after = new Map<string, StoredEntity | undefined>();
    /** Each entity as read, in the order of `after` (the map of them is made only for a caller that asks). */
    const reads: Array<StoredEntity | undefined> = [];
    const results: unknown[] = [];
    const { alongside, completeJobs } = options;
    const jobsAlong = options.jobs ?? [];
    if ((alongside || completeJobs || jobsAlong.length) && chunks.length > 1)
      throw new Error('internal: a write alongside the items needs one chunk');
    if ((alongside || completeJobs || jobsAlong.length) && chunks.length === 0) chunks.push({ items: [], slots: [] });
    for (let chunk of chunks) {
      // The daily re-ingest: entities whose every item holds its value already cost one read of their aspects and a compare.
      if (options.compareFirst && !system && !access && !options.dryRun && !alongside && !completeJobs && !jobsAlong.length) {
        const changing = await this.changingPart(chunk, batches);
        if (!changing) continue;
        chunk = changing;
      }
      const urns = chunk.slots.map((slot) => slot.urn);
      if (alongside && !urns.includes(alongside.urn)) urns.push(alongside.urn);
      let read: ReadonlyMap<string, StoredEntity> = new Map();
      const written = await this.writer.write(
        actor,
        urns,
        async (current, now) => {
          read = current;
          const plan = await this.plan(chunk, current, now, caller, batches, options.message, results, access);
          if (jobsAlong.length) plan.jobs.push(...jobsAlong);
          const extra = alongside?.plan(current, now);
          if (extra?.put) plan.entities.push({ urn: alongside!.urn, put: extra.put });
          if (extra?.jobs) plan.jobs.push(...extra.jobs);
          return plan;
        },
        { dryRun: options.dryRun === true, ...(completeJobs ? { completeJobs } : {}) },
      );
      for (const urn of urns) {
        after.set(urn, written.get(urn));
        reads.push(read.get(urn));
      }
    }
    return new PipelineOutcome(after, reads, results);
  }

  /**
   * The batch's privileges, checked once (those an admission holds are not checked again, unless held
   * only per resource). Returns the per-item check of the privileges held only through policies with
   * resources (undefined when every one is held everywhere: nothing more to check). A check that depends
   * on the entity an item changes is the owner's `authorize`, called where each item is planned.
   */
  private async authorize(principal: Actor, needs: ReadonlySet<Privilege>, caller: Caller): Promise<ItemAccess | undefined> {
    const { granted, perResource } = caller;
    if (!granted) return this.ctx.authorizer.authorizeBatch(principal, needs);
    let wanted: Privilege[] | undefined;
    for (const privilege of needs) if (!granted.has(privilege) || perResource?.has(privilege)) (wanted ??= []).push(privilege);
    return wanted ? this.ctx.authorizer.authorizeBatch(principal, wanted) : undefined;
  }

  /**
   * The part of the chunk that may change something: the entities with an item that is not a plain
   * upsert of the value the entity holds already (answered by the adapter from its stored form, without
   * building the entities) which its owner, if any, keeps as it is. Undefined when no entity changes;
   * the chunk itself when the adapter cannot tell. An entity left out writes nothing: its compare, from
   * one committed state, stands for its write (an entity's own items are never split).
   */
  private async changingPart(chunk: Chunk, batches: ReadonlyMap<AspectOwner, OwnerBatch>): Promise<Chunk | undefined> {
    const { adapter } = this.ctx;
    if (!adapter.matchAspects || chunk.items.length === 0) return chunk;
    const changing = new Set<Slot>();
    const asked: Routed[] = [];
    const queries: AspectMatchQuery[] = [];
    for (const r of chunk.items) {
      const { item, owner } = r;
      const plain =
        item.op === 'upsert' &&
        item.systemMetadata === undefined &&
        item.onlyIfAbsent === undefined &&
        // An owner that authorizes items on the entity they change is asked in the unit of work, as always.
        (!owner || (!owner.authorize && batches.get(owner)!.unchanged !== undefined)) &&
        typeof item.value === 'object' &&
        item.value !== null &&
        !Array.isArray(item.value);
      if (!plain) {
        changing.add(r.slot!);
        continue;
      }
      asked.push(r);
      queries.push({ urn: item.urn, aspect: item.aspect, value: item.value as JsonObject });
    }
    if (changing.size === chunk.slots.length) return chunk;
    const stored = await adapter.matchAspects(queries);
    for (let i = 0; i < asked.length; i++) {
      const r = asked[i]!;
      const found = stored[i];
      if (!found || (r.owner && !batches.get(r.owner)!.unchanged!(r.owned!, found))) changing.add(r.slot!);
    }
    if (changing.size === 0) return undefined;
    if (changing.size === chunk.slots.length) return chunk;
    return withSlots(
      chunk.items.filter((r) => changing.has(r.slot!)),
      false,
    );
  }

  private async plan(
    chunk: Chunk,
    current: ReadonlyMap<string, StoredEntity>,
    now: number,
    caller: { principal: Actor; system: boolean },
    batches: ReadonlyMap<AspectOwner, OwnerBatch>,
    message: string,
    results: unknown[],
    access?: ItemAccess,
  ) {
    const actor = caller.principal;
    const problems: Violation[] = [];
    const conflicts: Violation[] = [];
    const owners = new Set<AspectOwner>();
    // Each entity starts as read (a retried unit of work plans again from its new read).
    for (const slot of chunk.slots) {
      const entity = current.get(slot.urn);
      slot.read = entity;
      slot.base = entity;
      slot.dirty = false;
      slot.gone = undefined;
      slot.draft = undefined;
    }
    const { items } = chunk;
    for (let position = 0; position < items.length; position++) {
      const { item, owner, slot } = items[position]!;
      if (owner) owners.add(owner);
      if (item.op !== 'upsert' || !item.onlyIfAbsent) continue;
      const problem = presenceConflict(item.urn, item.aspect, slot!.read, item.onlyIfAbsent);
      if (problem) conflicts.push({ path: item.presencePath ?? item.path, message: problem });
    }
    if (conflicts.length)
      throw new CatalogError('CONFLICT', conflicts.length === 1 ? conflicts[0]!.message : 'entities or aspects exist already', {
        details: conflicts,
      });
    // Each owner learns what this unit of work read once, before its first item is planned.
    for (const owner of owners) await batches.get(owner)!.begin?.(current);
    // ACCESS HOOK: what the per-item checks need beyond this read (the datasets of columns), read once.
    if (access)
      await access.begin(
        current,
        chunk.slots.map((slot) => slot.urn),
      );
    const who = actorUrn(actor);
    const step = { who, now, problems };
    /** The entities with a draft, in the order their first change came. */
    const drafted: Slot[] = [];
    const jobs: NewJob[] = [];
    const rows = new Map<string, { index: TimeseriesIndexRef; rows: TimeseriesRow[] }>();
    const draftOf = (slot: Slot): Draft => {
      let d = slot.draft;
      if (!d) {
        slot.draft = d = { put: {}, deleteEntity: false };
        drafted.push(slot);
      }
      return d;
    };
    /** The slot's entity goes as a whole (a deletion, or an owner's edit that removes it); drafted only for one that exists. */
    const removeEntity = (slot: Slot, exists: boolean): void => {
      if (exists) {
        const d = draftOf(slot);
        d.deleteEntity = true;
        d.put = {};
        d.delete?.clear();
      }
      slot.base = undefined;
      slot.dirty = false;
      slot.gone = undefined;
    };
    for (let position = 0; position < items.length; position++) {
      const r = items[position]!;
      const { item } = r;
      const slot = r.slot!;
      if (item.op === 'deleteEntity') {
        if (access?.checks(r.privilege)) access.check({ urn: item.urn, entityType: r.entityType, path: item.path }, r.privilege, slot.read);
        const entity = workingEntity(slot, now, who);
        const planned = r.entityOwner?.planDelete?.(item.urn, entity);
        if (planned?.jobs) jobs.push(...planned.jobs);
        removeEntity(slot, entity !== undefined);
        continue;
      }
      if (item.op === 'patch' && item.onlyIfPresent && !workingEntity(slot, now, who)) continue;
      // An upsert of the value stored already (the daily re-ingest): compared, not planned; still authorized
      // as any write attempt is (an actor without the right is refused whether or not the value changes).
      if (item.op === 'upsert' && unchangedUpsert(item, r, slot, batches)) {
        if (!caller.system && r.owner?.authorize)
          await r.owner.authorize(
            actor,
            r.owned!,
            r.owner.reads && !touches(slot, r.owner.reads) ? slot.base : workingEntity(slot, now, who),
          );
        // ACCESS HOOK: the entity must be covered; no structured property changes, so none is checked.
        if (access?.checks(r.privilege))
          access.check({ urn: item.urn, entityType: r.entityType, path: item.path }, r.privilege, slot.read, []);
        continue;
      }
      // ACCESS HOOK: the structured properties an item sets or removes are those whose values differ before and after it.
      const checked = access?.checks(r.privilege) ? r.privilege : undefined;
      const valuesBefore =
        checked && item.aspect === VALUES_ASPECT ? workingEntity(slot, now, who)?.aspects[VALUES_ASPECT]?.value : undefined;
      let change: OwnedChange | undefined;
      if (r.owner) {
        // An owner that reads only some aspects gets the entity as read while the batch changed none of them (no stand-in).
        const entity = r.owner.reads && !touches(slot, r.owner.reads) ? slot.base : workingEntity(slot, now, who);
        // The one place an item is authorized on the entity it changes (beyond the batch's privileges).
        if (!caller.system && r.owner.authorize) await r.owner.authorize(actor, r.owned!, entity);
        // Most owners plan without waiting: a value that is not a promise is taken as it is (no turn of the event loop per item).
        const planned = batches.get(r.owner)!.plan(r.owned!, entity, step);
        change = planned instanceof Promise ? await planned : planned;
        if (change?.result !== undefined) results[r.index] = change.result;
      } else if (item.op === 'upsert') change = { put: { value: item.value as JsonObject } };
      else if (item.op === 'delete') change = { delete: true };
      else if (item.op === 'patch') {
        const entity = workingEntity(slot, now, who);
        const value = applyJsonPatch(entity?.aspects[item.aspect]?.value, item.operations, {
          describe: `${item.aspect} of ${item.urn}`,
          prefix: item.patchPath,
          ...(item.arrayPrimaryKeys ? { arrayPrimaryKeys: item.arrayPrimaryKeys } : {}),
        });
        problems.push(...this.ctx.registry.validateAspect(item.aspect, value, item.valuePath));
        change = { put: { value } };
      }
      if (checked) {
        const properties =
          item.aspect !== VALUES_ASPECT
            ? undefined
            : changedProperties(
                valuesBefore,
                change?.delete ? undefined : (change?.put?.value ?? change?.also?.[VALUES_ASPECT]?.value ?? valuesBefore),
              );
        access!.check({ urn: item.urn, entityType: r.entityType, path: item.path }, checked, slot.read, properties);
      }
      if (!change) continue;
      if (change.jobs) jobs.push(...change.jobs);
      if (change.deleteEntity) {
        // The owner's edit removes the whole entity (a token's expired record, say).
        removeEntity(slot, workingEntity(slot, now, who) !== undefined);
        continue;
      }
      if (change.rows) {
        const key = change.rows.index.indexName;
        const rowSlot = rows.get(key);
        if (rowSlot) rowSlot.rows.push(...change.rows.rows);
        else rows.set(key, { index: change.rows.index, rows: [...change.rows.rows] });
      }
      let put: AspectChange | undefined;
      if (change.put) {
        const kept = item.op === 'upsert' && item.systemMetadata ? keptSystemMetadata(item.systemMetadata) : undefined;
        const systemMetadata = withKeptSystemMetadata(change.put.systemMetadata, kept);
        if (systemMetadata) put = { value: change.put.value, systemMetadata };
        // The change as planned when it carries nothing else (the common case: no new object).
        else put = change.put.systemMetadata === undefined && hasOnlyValue(change.put) ? change.put : { value: change.put.value };
      }
      const also = change.also && hasKeys(change.also) ? change.also : undefined;
      if (!put && !also && !change.delete) continue;
      const d = draftOf(slot);
      // Later items of the entity see the change: their stand-in is made when one of them needs it.
      slot.dirty = true;
      if (also)
        for (const name in also) {
          if (Object.hasOwn(also, name)) record(d, name, name === item.aspect && put ? put : also[name]!);
        }
      if (put) record(d, item.aspect, put);
      if (change.delete) {
        delete d.put[item.aspect];
        if (slot.read?.aspects[item.aspect]) (d.delete ??= new Set()).add(item.aspect);
        (slot.gone ??= []).push(item.aspect);
      }
    }
    // ACCESS HOOK: one refused item refuses the batch (403, naming entity, property and privilege).
    access?.throwIfRefused();
    // What depends on the stored state (immutable values, a definition's breaking changes) was checked under this read.
    throwIfViolations(problems, message);
    const entities: EntityPlan[] = [];
    for (const slot of drafted) {
      const { urn } = slot;
      const d = slot.draft!;
      if (d.deleteEntity) {
        // An entity deleted and then written again in one batch is replaced: its old aspects go.
        const rewritten = hasKeys(d.put);
        if (!rewritten) entities.push({ urn, deleteEntity: true });
        else {
          const old = Object.keys(slot.read?.aspects ?? {}).filter((n) => !(n in d.put));
          entities.push({ urn, put: d.put, delete: old });
        }
        continue;
      }
      const plan: EntityPlan = { urn, entityType: slot.read?.entityType ?? slot.entityType };
      if (hasKeys(d.put)) plan.put = d.put;
      if (d.delete?.size) plan.delete = [...d.delete];
      entities.push(plan);
    }
    return { entities, jobs, timeseries: [...rows.values()] };
  }
}

/**
 * The entity as the chunk's earlier items left it: its base, or a stand-in made from the base and the
 * changes the draft holds since (the commit stamps the real aspects).
 */
function workingEntity(slot: Slot, now: number, who: string): StoredEntity | undefined {
  if (!slot.dirty) return slot.base;
  const base = slot.base;
  const d = slot.draft!;
  const aspects: Record<string, StoredAspect> = { ...(base?.aspects ?? {}) };
  if (slot.gone) for (const name of slot.gone) delete aspects[name];
  // The draft holds every change of the chunk: one the base shows already gives the same stand-in again.
  for (const name in d.put) if (Object.hasOwn(d.put, name)) aspects[name] = standIn(name, d.put[name]!, aspects[name], now, who);
  const entity: StoredEntity = { urn: slot.urn, entityType: base?.entityType ?? slot.entityType, version: base?.version ?? 0, aspects };
  slot.base = entity;
  slot.dirty = false;
  slot.gone = undefined;
  return entity;
}

/**
 * Whether an upsert would change nothing: a plain upsert (no system metadata to refresh, no presence
 * condition) of the value the entity holds (as read, or as the chunk's earlier items left it), which
 * its owner, if it has one, says it would keep as it is.
 */
function unchangedUpsert(
  item: Extract<WriteItem, { op: 'upsert' }>,
  r: Routed,
  slot: Slot,
  batches: ReadonlyMap<AspectOwner, OwnerBatch>,
): boolean {
  if (item.systemMetadata !== undefined || item.onlyIfAbsent !== undefined) return false;
  if (slot.dirty && touches(slot, [item.aspect])) return false;
  const stored = slot.base?.aspects[item.aspect];
  if (stored === undefined || !sameJson(stored.value, item.value)) return false;
  if (!r.owner) return true;
  const batch = batches.get(r.owner)!;
  return batch.unchanged !== undefined && batch.unchanged(r.owned!, stored);
}

/** Whether the chunk's earlier items changed one of these aspects of the entity since its base. */
function touches(slot: Slot, names: readonly string[]): boolean {
  if (!slot.dirty) return false;
  const put = slot.draft!.put;
  for (const name of names) if (Object.hasOwn(put, name) || slot.gone?.includes(name)) return true;
  return false;
}

/** Records a change in the entity's draft (later items of the entity see it through their stand-in). */
function record(d: Draft, name: string, change: AspectChange): void {
  d.put[name] = change;
  d.delete?.delete(name);
}

/** An upsert as its owner gets it: its path is the item's, read when asked for (only a violation needs it). */
class OwnedUpsert implements OwnedItem {
  readonly op = 'upsert' as const;
  readonly urn: string;
  readonly aspect: string;
  readonly value: unknown;

  constructor(
    private readonly item: Extract<WriteItem, { op: 'upsert' }>,
    readonly index: number,
    readonly entityType: string,
  ) {
    this.urn = item.urn;
    this.aspect = item.aspect;
    this.value = item.value;
  }

  get path(): string {
    return this.item.path;
  }
}

function toOwnedItem(item: Exclude<WriteItem, { op: 'deleteEntity' }>, index: number, entityType: string, system: boolean): OwnedItem {
  if (item.op === 'upsert') return new OwnedUpsert(item, index, entityType);
  const { op, urn, aspect, path } = item;
  if (op === 'edit' && system) return { index, op, urn, entityType, aspect, path, edit: item.edit, system: true };
  if (op === 'patch')
    return {
      index,
      op,
      urn,
      entityType,
      aspect,
      path,
      operations: item.operations,
      patchPath: item.patchPath,
      ...(item.arrayPrimaryKeys ? { arrayPrimaryKeys: item.arrayPrimaryKeys } : {}),
    };
  if (op === 'edit') return { index, op, urn, entityType, aspect, path, edit: item.edit };
  return { index, op, urn, entityType, aspect, path };
}

/** The aspect as later items of the batch see it (the commit stamps the real one). */
function standIn(name: string, change: AspectChange, previous: StoredAspect | undefined, now: number, actor: string): StoredAspect {
  return {
    name,
    value: change.value,
    version: previous?.version ?? 0,
    created: previous?.created ?? { time: now, actor },
    lastModified: { time: now, actor },
    ...(change.systemMetadata ? { systemMetadata: change.systemMetadata } : {}),
  };
}

/** Chunks of whole entities, in the order of their first item; one chunk when `size` is left out. */
function chunksOf(routed: readonly Routed[], size: number | undefined): Chunk[] {
  // One chunk keeps the batch's order, whether or not an entity's items are next to each other.
  if (size === undefined) return routed.length ? [withSlots([...routed], false)] : [];
  const contiguous = contiguousChunks(routed, size);
  if (contiguous) return contiguous.map((items) => withSlots(items, true));
  const byUrn = new Map<string, Routed[]>();
  for (const r of routed) {
    const list = byUrn.get(r.item.urn);
    if (list) list.push(r);
    else byUrn.set(r.item.urn, [r]);
  }
  const chunks: Chunk[] = [];
  let chunk: Routed[] = [];
  let entities = 0;
  for (const list of byUrn.values()) {
    if (entities === size) {
      chunks.push(withSlots(chunk, true));
      chunk = [];
      entities = 0;
    }
    chunk.push(...list);
    entities++;
  }
  if (chunk.length) chunks.push(withSlots(chunk, true));
  return chunks;
}

/**
 * The chunk with its entities, once each, in the order of their first item; each item points at its
 * entity. `contiguous`: each entity's items are next to each other (no lookup by URN is needed).
 */
function withSlots(items: Routed[], contiguous: boolean): Chunk {
  const slots: Slot[] = [];
  const byUrn = contiguous ? undefined : new Map<string, Slot>();
  let last: Slot | undefined;
  for (let i = 0; i < items.length; i++) {
    const r = items[i]!;
    const urn = r.item.urn;
    if (last === undefined || last.urn !== urn) {
      let slot = byUrn?.get(urn);
      if (!slot) {
        slot = new Slot(urn, r.entityType);
        slots.push(slot);
        byUrn?.set(urn, slot);
      }
      last = slot;
    }
    r.slot = last;
  }
  return { items, slots };
}

/**
 * `chunksOf` when each entity's items are next to each other already (the usual batch): slices of the
 * batch, in its order; undefined when an entity's items are apart (they are grouped then).
 */
function contiguousChunks(routed: readonly Routed[], size: number): Routed[][] | undefined {
  const seen = new Set<string>();
  const chunks: Routed[][] = [];
  let start = 0;
  let entities = 0;
  let last: string | undefined;
  for (let i = 0; i < routed.length; i++) {
    const urn = routed[i]!.item.urn;
    if (urn === last) continue;
    if (seen.has(urn)) return undefined;
    seen.add(urn);
    last = urn;
    if (entities === size) {
      chunks.push(routed.slice(start, i));
      start = i;
      entities = 0;
    }
    entities++;
  }
  if (routed.length > start) chunks.push(routed.slice(start));
  return chunks;
}

/** Why a write that is only for absent aspects or entities is refused; undefined when it may go ahead. */
function presenceConflict(
  urn: string,
  aspect: string,
  current: StoredEntity | undefined,
  onlyIfAbsent: 'aspect' | 'entity',
): string | undefined {
  if (!current) return undefined;
  if (onlyIfAbsent === 'entity') return `${urn} exists already (the write only creates an entity that does not exist)`;
  if (current.aspects[aspect] !== undefined)
    return `${urn} has a "${aspect}" aspect already (the write only creates an aspect that does not exist)`;
  return undefined;
}

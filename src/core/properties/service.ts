import type { Actor } from '../access/actor';
import type { StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { EntityView } from '../entities/service';
import type { DomainOwners, EntityDeleter, ReadTransform } from '../entities/owner';
import type { DomainModule, DomainParts } from '../module';
import { propertyDeleter, propertyOwners } from './owner';
import { relativeTo, throwIfViolations, withPaths, type Violation } from '../../errors';
import type { WritePipeline } from '../entities/write-pipeline';
import type { CanonicalDefinition } from './definitions';
import { propertyCleanupJobs } from './cleanup';
import { DefinitionOwner } from './definition-owner';
import { PropertyDefinitionService } from './definitions';
import { filterFieldSource, resolveFilterField } from './filter-fields';
import { ValueOwner } from './value-owner';
import { assignmentsOf, DefinitionCache, propertyUrnsOf } from './lookup';
import { fillSettings, SETTINGS_ASPECT, type StructuredPropertySettings } from './settings';
import { storedValues } from './value-rules';
import { PropertyValueService } from './values';
import { propertyValueHistory, type PropertyValueChange } from './value-history';
import {
  DEFINITION_ASPECT,
  VALUES_ASPECT,
  type FilterFieldSource,
  type DefinitionUpdate,
  type DefinitionUpsertResult,
  type HardDeleteResult,
  type PropertyAssignment,
  type CreatePropertyDefinitionInput,
  type PropertyDefinitionInput,
  type RestPropertyDefinitionInput,
  type PropertyPatchRequest,
  type PropertyReadBack,
  type ResolvedPropertyField,
  type StructuredPropertyDefinition,
  type StructuredPropertyView,
} from './types';
import type { StructuredPropertySettingsInput } from './settings';

/**
 * `catalog.properties`: structured property definitions and their values on entities. The GraphQL,
 * HTTP and command-line layers are thin shells over these methods; every rule lives behind them.
 * Every method takes the acting user first; writes of definitions need MANAGE_STRUCTURED_PROPERTIES,
 * writes of values EDIT_ENTITY_PROPERTIES, reads an authenticated actor.
 *
 * Input is canonical: a definition is the `propertyDefinition` aspect's JSON with its URN
 * (`{ urn?, qualifiedName, valueType, entityTypes, allowedValues: [{ value: { string } | { double } }], ... }`),
 * values are the `structuredProperties` aspect (`{ properties: [{ propertyUrn, values: [{ string } | { double }] }] }`),
 * and violation paths point into that input. The GraphQL, YAML and REST spellings are decoded by their
 * transports (`metacatalog/graphql` exports its decoders); a transport hands what its decoder found as
 * `prior`, reported with the rules' violations in one answer after the actor is admitted, and maps the
 * paths back to its own spelling.
 */
export interface StructuredPropertyService {
  /**
   * Creates a definition (CONFLICT when the URN exists, also soft-deleted):
   * `create(actor, { qualifiedName: 'io.acme.tier', valueType: 'string', entityTypes: ['dataset'] })`.
   * `input` is undefined only with `prior` violations (a decoder that could not read its input).
   */
  create(
    actor: Actor,
    input: CreatePropertyDefinitionInput | undefined,
    options?: { settings?: StructuredPropertySettingsInput; prior?: readonly Violation[] },
  ): Promise<StructuredPropertyView>;
  /** Changes a stored definition (texts replaced, lists appended, SINGLE → MULTIPLE, version, settings): `update(actor, { urn, addEntityTypes: ['chart'] })`. */
  update(actor: Actor, input: DefinitionUpdate, options?: { prior?: readonly Violation[] }): Promise<StructuredPropertyView>;
  /** Creates or replaces a whole definition; reports which. Violations relative to the input. */
  upsert(actor: Actor, input: PropertyDefinitionInput): Promise<DefinitionUpsertResult>;
  /**
   * Creates or replaces whole definitions (item `i` reported under `/<i>`): all validated, then written
   * in one atomic commit. `prior[i]`: what a decoder found in item `i` (undefined there when it could not decode it).
   */
  upsertMany(
    actor: Actor,
    inputs: ReadonlyArray<PropertyDefinitionInput | undefined>,
    options?: { prior?: ReadonlyArray<readonly Violation[]> },
  ): Promise<DefinitionUpsertResult[]>;
  /** The definition, also when soft-deleted (`removed: true`); undefined when it does not exist. */
  get(actor: Actor, urn: string): Promise<StructuredPropertyView | undefined>;
  /** The command-line read-back form (docs/cli.md). */
  getReadBack(actor: Actor, urn: string): Promise<PropertyReadBack | undefined>;
  list(
    actor: Actor,
    options?: { includeRemoved?: boolean; afterUrn?: string; limit?: number },
  ): Promise<{ properties: StructuredPropertyView[]; nextAfterUrn?: string }>;
  softDelete(actor: Actor, urn: string): Promise<StructuredPropertyView>;
  restore(actor: Actor, urn: string): Promise<StructuredPropertyView>;
  /** Removes the definition now; its values are hidden now and removed by durable background work. */
  hardDelete(actor: Actor, urn: string): Promise<HardDeleteResult>;
  /** Soft unless `hard` (GraphQL `deleteStructuredProperty`, CLI `delete`). */
  delete(actor: Actor, urn: string, options?: { hard?: boolean }): Promise<{ urn: string; hard: boolean; entitiesToClean: number }>;
  /** For search: `structuredProperties.<qualifiedName>` → property URN, definition key, value kind; refuses unknown and soft-deleted. */
  resolveFilterField(actor: Actor, qualifiedName: string): Promise<ResolvedPropertyField>;

  /**
   * The visible structured properties of an entity already read through `catalog.entities` (whose read
   * transform hid values of missing, soft-deleted or superseded definitions): for transports that batch
   * their reads.
   */
  valuesOf(view: EntityView): PropertyAssignment[];
  /** The definition of a structured property entity already read through `catalog.entities`; undefined when it has none. */
  definitionOf(view: EntityView): StructuredPropertyDefinition | undefined;
  /** The `structuredPropertySettings` of a property entity read through `catalog.entities`, every flag filled in; undefined when it has none. */
  settingsOf(view: EntityView): StructuredPropertySettings | undefined;
  /** The entity's visible structured properties. */
  getValues(actor: Actor, entityUrn: string): Promise<PropertyAssignment[]>;
  /** Replaces all of the entity's structured properties; returns those it has afterwards. */
  /**
   * `upsertValues(actor, urn, { properties: [{ propertyUrn, values: [{ string: 'gold' }] }] })`. `prior`:
   * what a decoder found (canonical or its own paths); `malformed`: elements whose values it could not
   * decode (only their property is checked).
   */
  upsertValues(
    actor: Actor,
    entityUrn: string,
    input: { properties: PropertyAssignment[] },
    options?: { prior?: readonly Violation[]; malformed?: ReadonlySet<number> },
  ): Promise<PropertyAssignment[]>;
  /** Removes the named properties; returns the properties left. */
  removeValues(actor: Actor, entityUrn: string, propertyUrns: readonly string[]): Promise<PropertyAssignment[]>;
  /** JSON Patch with `/properties/<property urn>` paths, atomic; returns the properties left. */
  patchValues(actor: Actor, entityUrn: string, request: PropertyPatchRequest): Promise<PropertyAssignment[]>;
  /**
   * Each value each property had on the entity (all properties, or one), newest first, with who set it,
   * when and under which definition version; derived from the kept aspect versions (docs/changes.md).
   */
  valueHistory(actor: Actor, entityUrn: string, propertyUrn?: string): Promise<PropertyValueChange[]>;
  /** Bulk replace for ingestion: all validated first, then atomic chunks of 500 entities. */
  upsertValuesMany(
    actor: Actor,
    items: ReadonlyArray<{ urn: string; properties: PropertyAssignment[] }>,
  ): Promise<Array<{ urn: string; properties: PropertyAssignment[] }>>;
}

/** Readers never see values of a missing, soft-deleted or superseded definition. */
function visibilityTransform(cache: DefinitionCache): ReadTransform {
  return async (entities: StoredEntity[]) => {
    const urns = propertyUrnsOf(entities);
    if (urns.size === 0) return entities;
    const definitions = await cache.load(urns);
    return entities.map((entity) => {
      const aspect = entity.aspects[VALUES_ASPECT];
      if (!aspect) return entity;
      const { visible } = storedValues(entity, definitions);
      if (visible.length === assignmentsOf(aspect).length) return entity;
      const value = { ...aspect.value, properties: JSON.parse(JSON.stringify(visible)) };
      return { ...entity, aspects: { ...entity.aspects, [VALUES_ASPECT]: { ...aspect, value } } };
    });
  };
}

/** What the properties domain's service is built from: the one write path. */
interface PropertiesDeps {
  pipeline: WritePipeline;
}

/** The service, and how `catalog.entities` deletes a structured property (through it). */
interface PropertiesService {
  service: StructuredPropertyService;
  deleter: EntityDeleter;
}

/** The properties domain as createCatalog composes it. */
export interface PropertiesParts extends DomainParts<PropertiesDeps, PropertiesService> {
  readonly owners: DomainOwners;
  /** For search: what `structuredProperties.<qualifiedName>` means (not part of `catalog.properties`). */
  readonly filterFields: FilterFieldSource;
}

/**
 * The properties domain: the owners of definitions, settings, status and values (with what readers see
 * of values), the clean-up job, the search's filter fields, and `catalog.properties` over the pipeline.
 */
export const propertiesModule: DomainModule<PropertiesParts> = {
  name: 'properties',
  build(ctx) {
    // Readers share one cache of definitions, kept while nothing changes (see DefinitionCache).
    const cache = new DefinitionCache(ctx.adapter);
    const visible = visibilityTransform(cache);
    return {
      owners: propertyOwners(new DefinitionOwner(ctx), new ValueOwner(ctx), visible),
      filterFields: filterFieldSource(ctx, cache),
      createService: ({ pipeline }) => {
        const definitions = new PropertyDefinitionService(ctx, cache, pipeline);
        const values = new PropertyValueService(ctx, visible, pipeline);
        return { service: serviceOver(ctx, cache, definitions, values), deleter: propertyDeleter(definitions) };
      },
      jobs: (_service, { pipeline }) => propertyCleanupJobs(ctx, pipeline),
    };
  },
};

function serviceOver(
  ctx: CatalogContext,
  cache: DefinitionCache,
  definitions: PropertyDefinitionService,
  values: PropertyValueService,
): StructuredPropertyService {
  return {
    create: (actor, input, options = {}) => {
      const violations: Violation[] = [...(options.prior ?? [])];
      const canonical = input && canonicalOf(input, '', violations);
      return definitions.create(actor, canonical, { prior: violations, ...(options.settings ? { settings: options.settings } : {}) });
    },
    update: async (actor, input, options = {}) => {
      // Admitted before the input is read; the update is not checked again.
      const admitted = await definitions.manager(actor);
      throwIfViolations([...(options.prior ?? [])], 'invalid structured property update');
      return definitions.update(admitted, input);
    },
    upsert: async (actor, input) => {
      const violations: Violation[] = [];
      const canonical = canonicalOf(input, '/0', violations);
      // One item reports under /0: a single write reports relative to its input.
      const [result] = await definitions.upsertMany(actor, [canonical], [violations]).catch((error: unknown) => {
        throw withPaths(error, (path) => relativeTo(path, '/0'));
      });
      return result!;
    },
    upsertMany: (actor, inputs, options = {}) => {
      const prior = inputs.map((_, i): Violation[] => [...(options.prior?.[i] ?? [])]);
      const canonical = inputs.map((input, i) => input && canonicalOf(input, `/${i}`, prior[i]!));
      return definitions.upsertMany(actor, canonical, prior);
    },
    get: (actor, urn) => definitions.get(actor, urn),
    getReadBack: (actor, urn) => definitions.getReadBack(actor, urn),
    list: (actor, options) => definitions.list(actor, options),
    softDelete: (actor, urn) => definitions.setRemoved(actor, urn, true),
    restore: (actor, urn) => definitions.setRemoved(actor, urn, false),
    hardDelete: (actor, urn) => definitions.hardDelete(actor, urn),
    delete: async (actor, urn, options = {}) => {
      if (options.hard) return { ...(await definitions.hardDelete(actor, urn)), hard: true };
      await definitions.setRemoved(actor, urn, true);
      return { urn, hard: false, entitiesToClean: 0 };
    },
    resolveFilterField: (actor, qualifiedName) => resolveFilterField(ctx, cache, actor, qualifiedName),
    valuesOf: (view) => assignmentsOf(view.aspects[VALUES_ASPECT]),
    definitionOf: (view) => view.aspects[DEFINITION_ASPECT]?.value as unknown as StructuredPropertyDefinition | undefined,
    settingsOf: (view) => {
      const value = view.aspects[SETTINGS_ASPECT]?.value;
      return value ? fillSettings(value) : undefined;
    },
    getValues: (actor, entityUrn) => values.get(actor, entityUrn),
    valueHistory: (actor, entityUrn, propertyUrn) => propertyValueHistory(ctx, actor, entityUrn, propertyUrn),
    upsertValues: (actor, entityUrn, input, options = {}) =>
      values.upsert(actor, entityUrn, input, { violations: [...(options.prior ?? [])], malformed: options.malformed ?? new Set() }),
    removeValues: (actor, entityUrn, propertyUrns) => values.remove(actor, entityUrn, propertyUrns),
    patchValues: (actor, entityUrn, request) => values.patch(actor, entityUrn, request),
    upsertValuesMany: (actor, items) => values.upsertMany(actor, items),
  };
}

/** `{ urn?, ...aspect }` → the URN and the aspect's JSON the rules read; a URN that is not a string is reported at `<prefix>/urn`. */
function canonicalOf(
  input: PropertyDefinitionInput | CreatePropertyDefinitionInput,
  prefix: string,
  violations: Violation[],
): CanonicalDefinition | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    return { value: input as unknown as RestPropertyDefinitionInput };
  const { urn, ...rest } = input;
  // The typed names are checked by the compiler for library callers; the rules read the aspect's JSON as any caller sends it.
  const value = rest as unknown as RestPropertyDefinitionInput;
  if (urn !== undefined && typeof urn !== 'string') {
    violations.push({ path: `${prefix}/urn`, message: 'must be a string (a urn:li:structuredProperty:<id> URN)' });
    return { value };
  }
  return { ...(urn !== undefined ? { urn } : {}), value };
}

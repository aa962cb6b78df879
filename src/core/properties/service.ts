import type { Actor } from '../access/actor';
import type { StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { EntityView } from '../entities/service';
import type { DomainOwners, EntityDeleter, ReadTransform } from '../entities/owner';
import type { DomainModule, DomainParts } from '../module';
import { propertyDeleter, propertyOwners } from './owner';
import {
  decodeGraphqlAssignments,
  decodeGraphqlDefinition,
  decodeGraphqlUpdate,
  graphqlDefinitionPath,
  graphqlUpdatePath,
  graphqlValuesPath,
} from './graphql-input';
import { isCatalogError, relativeTo, throwIfViolations, withPaths } from '../../errors';
import type { WritePipeline } from '../entities/write-pipeline';
import { parseYamlDefinitions } from './definition-shapes';
import { decodeYamlEntry, yamlDefinitionPath } from './yaml-input';
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
  type CreateStructuredPropertyInput,
  type DefinitionInputShape,
  type DefinitionUpsertResult,
  type GraphqlPropertyAssignmentInput,
  type HardDeleteResult,
  type PropertyAssignment,
  type PropertyPatchRequest,
  type PropertyReadBack,
  type ResolvedPropertyField,
  type RestPropertyDefinitionInput,
  type StructuredPropertyDefinition,
  type StructuredPropertyView,
  type UpdateStructuredPropertyInput,
  type YamlPropertyEntry,
} from './types';

/**
 * `catalog.properties`: structured property definitions and their values on entities. The GraphQL,
 * HTTP and command-line layers are thin shells over these methods; every rule lives behind them.
 * Every method takes the acting user first; writes of definitions need MANAGE_STRUCTURED_PROPERTIES,
 * writes of values EDIT_ENTITY_PROPERTIES, reads an authenticated actor.
 */
export interface StructuredPropertyService {
  /** Creates a definition (CONFLICT when the URN exists). Input shape: GraphQL create input (default), REST aspect JSON, YAML entry. */
  create(actor: Actor, input: CreateStructuredPropertyInput, options?: { shape?: 'graphql' }): Promise<StructuredPropertyView>;
  create(actor: Actor, input: RestPropertyDefinitionInput, options: { shape: 'rest'; urn?: string }): Promise<StructuredPropertyView>;
  create(actor: Actor, input: YamlPropertyEntry, options: { shape: 'yaml' }): Promise<StructuredPropertyView>;
  /** GraphQL `updateStructuredProperty`. */
  update(actor: Actor, input: UpdateStructuredPropertyInput): Promise<StructuredPropertyView>;
  /** Creates or replaces a whole definition (REST POST of the aspect, one YAML entry); reports which. */
  upsert(actor: Actor, input: RestPropertyDefinitionInput, options: { shape: 'rest'; urn?: string }): Promise<DefinitionUpsertResult>;
  upsert(actor: Actor, input: YamlPropertyEntry, options: { shape: 'yaml' }): Promise<DefinitionUpsertResult>;
  /** The command-line file (a YAML list): all entries validated, then written in one atomic commit. */
  upsertYaml(actor: Actor, yamlText: string): Promise<DefinitionUpsertResult[]>;
  upsertYamlEntries(actor: Actor, entries: readonly YamlPropertyEntry[]): Promise<DefinitionUpsertResult[]>;
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
  upsertValues(
    actor: Actor,
    entityUrn: string,
    input: { properties: PropertyAssignment[] },
    options?: { shape?: 'rest' },
  ): Promise<PropertyAssignment[]>;
  upsertValues(
    actor: Actor,
    entityUrn: string,
    input: GraphqlPropertyAssignmentInput[],
    options: { shape: 'graphql' },
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
export interface PropertiesDeps {
  pipeline: WritePipeline;
}

/** The service, and how `catalog.entities` deletes a structured property (through it). */
export interface PropertiesService {
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
    create: (actor: Actor, input: unknown, options: { shape?: DefinitionInputShape; urn?: string } = {}) =>
      createFromShape(definitions, actor, input, options),
    update: async (actor, input) => {
      // The GraphQL spelling is decoded into the canonical update; violations are reported in its own spelling.
      // Admitted before the input is read; the update is not checked again.
      const admitted = await definitions.manager(actor);
      const { update, violations } = decodeGraphqlUpdate(input);
      throwIfViolations(violations, 'invalid structured property update');
      return definitions.update(admitted, update!).catch((error: unknown) => {
        throw graphqlUpdateError(error);
      });
    },
    upsert: async (actor: Actor, input: unknown, options: { shape: 'rest' | 'yaml'; urn?: string }) => {
      if (options.shape === 'yaml') return (await upsertYamlEntries(definitions, actor, [input]))[0]!;
      const canonical = { ...(options.urn !== undefined ? { urn: options.urn } : {}), value: input as RestPropertyDefinitionInput };
      // One canonical item reports under /0: a single REST write reports relative to the body.
      const [result] = await definitions.upsertMany(actor, [canonical], []).catch((error: unknown) => {
        throw withPaths(error, (path) => relativeTo(path, '/0'));
      });
      return result!;
    },
    upsertYaml: (actor, text) => upsertYamlEntries(definitions, actor, parseYamlDefinitions(text)),
    upsertYamlEntries: (actor, entries) => upsertYamlEntries(definitions, actor, entries),
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
    upsertValues: async (actor: Actor, entityUrn: string, input: unknown, options: { shape?: 'rest' | 'graphql' } = {}) => {
      if (options.shape !== 'graphql') return values.upsert(actor, entityUrn, input);
      // The GraphQL spelling is decoded into the canonical input; violations are reported in its own spelling.
      const decoded = decodeGraphqlAssignments(input);
      return values.upsert(actor, entityUrn, decoded.input, decoded.report).catch((error: unknown) => {
        throw withPaths(error, graphqlValuesPath);
      });
    },
    removeValues: (actor, entityUrn, propertyUrns) => values.remove(actor, entityUrn, propertyUrns),
    patchValues: (actor, entityUrn, request) => values.patch(actor, entityUrn, request),
    upsertValuesMany: (actor, items) => values.upsertMany(actor, items),
  };
}

/**
 * `catalog.properties.create` in each spelling it takes: the GraphQL and YAML inputs are decoded into
 * the canonical definition first, and violation paths are mapped back to the caller's spelling.
 */
async function createFromShape(
  definitions: PropertyDefinitionService,
  actor: Actor,
  input: unknown,
  options: { shape?: DefinitionInputShape; urn?: string },
): Promise<StructuredPropertyView> {
  if (options.shape === 'rest')
    return definitions.create(actor, {
      ...(options.urn !== undefined ? { urn: options.urn } : {}),
      value: input as RestPropertyDefinitionInput,
    });
  const decoded = options.shape === 'yaml' ? decodeYamlEntry(input, '') : decodeGraphqlDefinition(input);
  const settings = 'settings' in decoded ? decoded.settings : undefined;
  const pathOf =
    options.shape === 'yaml'
      ? yamlDefinitionPath(() => decoded.idOnly, decoded.violations)
      : graphqlDefinitionPath(decoded.idOnly, decoded.violations);
  return definitions
    .create(actor, decoded.input, { prior: decoded.violations, ...(settings ? { settings } : {}) })
    .catch((error: unknown) => {
      throw withPaths(error, pathOf);
    });
}

/** YAML entries (`/<i>` each), decoded, then written in one commit by the canonical upsert; paths back in the file's spelling. */
async function upsertYamlEntries(
  definitions: PropertyDefinitionService,
  actor: Actor,
  entries: readonly unknown[],
): Promise<DefinitionUpsertResult[]> {
  const decoded = entries.map((entry, i) => decodeYamlEntry(entry, `/${i}`));
  const pathOf = yamlDefinitionPath(
    (index) => index !== undefined && decoded[index]?.idOnly === true,
    decoded.flatMap((d) => d.violations),
  );
  return definitions
    .upsertMany(
      actor,
      decoded.map((d) => d.input),
      decoded.map((d) => d.violations),
    )
    .catch((error: unknown) => {
      throw withPaths(error, pathOf);
    });
}

/** An error of the canonical update said in the GraphQL input's spelling (unchanged when no path is spelled otherwise). */
function graphqlUpdateError(error: unknown): unknown {
  if (!isCatalogError(error) || error.details.every((d) => graphqlUpdatePath(d.path) === d.path)) return error;
  return withPaths(error, graphqlUpdatePath);
}

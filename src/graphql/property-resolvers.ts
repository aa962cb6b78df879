import type { Catalog } from '../catalog';
import { CatalogError } from '../errors';
import {
  DATA_TYPE_URN_PREFIX,
  ENTITY_TYPE_URN_PREFIX,
  type CreateStructuredPropertyInput,
  type GraphqlPropertyAssignmentInput,
  type StructuredPropertyDefinition,
  type UpdateStructuredPropertyInput,
} from '../core/properties';
import type { ApplyToMatchesInput } from '../core/stewardship';
import { refOf, refOfView } from './entity-refs';
import { viewOf } from './entity-resolvers';
import {
  propertyRefOf,
  propertyValueTypeName,
  toGraphQLValue,
  toStructuredProperties,
  type GraphQLPropertyValue,
  type PropertyEntry,
  type PropertyRef,
} from './property-shapes';
import {
  createStructuredPropertyFromGraphql,
  decodeGraphqlAssignments,
  decodeGraphqlPreview,
  type GraphqlPreviewInput,
  updateStructuredPropertyFromGraphql,
  upsertStructuredPropertiesFromGraphql,
} from './property-input';
import type { RequestState } from './request-state';
import type { ResolverFunction } from './resolver-types';

const STD_DATA_TYPES: Readonly<Record<string, { type: string; displayName: string }>> = {
  string: { type: 'STRING', displayName: 'String' },
  rich_text: { type: 'RICH_TEXT', displayName: 'Rich text' },
  number: { type: 'NUMBER', displayName: 'Number' },
  date: { type: 'DATE', displayName: 'Date' },
  urn: { type: 'URN', displayName: 'URN' },
};

function nameAfter(prefix: string, urn: string): string {
  return urn.startsWith(prefix) ? urn.slice(prefix.length) : urn;
}

/** The definition a reference carries, or the one the request's loader reads (batched). */
async function definitionOf(catalog: Catalog, ref: PropertyRef, state: RequestState): Promise<StructuredPropertyDefinition> {
  if (ref.property) return ref.property.definition;
  const view = await viewOf(ref, state);
  const definition = view && catalog.properties.definitionOf(view);
  if (!definition) throw new CatalogError('NOT_FOUND', `structured property ${ref.urn} does not exist`);
  return definition;
}

/** `BatchApplyStructuredPropertiesInput` as GraphQL hands it over. */
type BatchApplyInput = Omit<ApplyToMatchesInput, 'set'> & {
  set?: GraphqlPropertyAssignmentInput[] | null;
  dryRun?: boolean | null;
  chunkSize?: number | null;
};

/** Structured property definitions and values: each operation is one call of `catalog.properties`. */
export function propertyResolvers(
  catalog: Catalog,
  stateOf: (context: unknown) => RequestState,
): Record<string, Record<string, ResolverFunction>> {
  const entityTypeEntity = (urn: string) => ({ urn });
  return {
    Query: {
      structuredProperty: async (_parent: unknown, args: { urn: string }, context: unknown) => {
        const property = await catalog.properties.get(stateOf(context).actor, args.urn);
        return property ? propertyRefOf(property) : null;
      },
      previewStructuredPropertyChange: async (_parent: unknown, args: { input: GraphqlPreviewInput }, context: unknown) => {
        const preview = await catalog.properties.previewChange(stateOf(context).actor, decodeGraphqlPreview(args.input));
        return { ...preview, sample: preview.sample.map((s) => ({ urn: s.urn, values: s.values.map(toGraphQLValue) })) };
      },
      structuredPropertyApplyStatus: async (_parent: unknown, args: { jobId: string }, context: unknown) =>
        catalog.properties.applyStatus(stateOf(context).actor, args.jobId),
    },
    Mutation: {
      createStructuredProperty: async (_parent: unknown, args: { input: CreateStructuredPropertyInput }, context: unknown) =>
        propertyRefOf(await createStructuredPropertyFromGraphql(catalog, stateOf(context).actor, args.input)),
      updateStructuredProperty: async (_parent: unknown, args: { input: UpdateStructuredPropertyInput }, context: unknown) =>
        propertyRefOf(await updateStructuredPropertyFromGraphql(catalog, stateOf(context).actor, args.input)),
      deleteStructuredProperty: async (_parent: unknown, args: { input: { urn: string; hard?: boolean | null } }, context: unknown) => {
        // Hard unless `hard: false`, as the platform's web app means it (it sends only `{ urn }`).
        await catalog.properties.delete(stateOf(context).actor, args.input.urn, { hard: args.input.hard !== false });
        return true;
      },
      upsertStructuredProperties: async (
        _parent: unknown,
        args: { input: { assetUrn: string; structuredPropertyInputParams: GraphqlPropertyAssignmentInput[] } },
        context: unknown,
      ) => {
        const { assetUrn, structuredPropertyInputParams } = args.input;
        const assignments = await upsertStructuredPropertiesFromGraphql(
          catalog,
          stateOf(context).actor,
          assetUrn,
          structuredPropertyInputParams,
        );
        return toStructuredProperties(assetUrn, assignments);
      },
      batchApplyStructuredProperties: async (_parent: unknown, args: { input: BatchApplyInput }, context: unknown) => {
        const { dryRun, chunkSize, set, ...scope } = args.input;
        // The same decoder as upsertStructuredProperties; what it could not decode is left for the rules to refuse.
        const input = { ...scope, ...(set ? { set: decodeGraphqlAssignments(set).input.properties } : {}) };
        const answer = await catalog.properties.applyToMatches(stateOf(context).actor, input, {
          dryRun: dryRun === true,
          ...(typeof chunkSize === 'number' ? { chunkSize } : {}),
        });
        if ('jobId' in answer) return { ...answer, sample: [], violations: [] };
        return {
          ...answer,
          jobId: null,
          sample: answer.sample.map((x) => ({
            urn: x.urn,
            before: toStructuredProperties(x.urn, x.before),
            after: toStructuredProperties(x.urn, x.after),
          })),
        };
      },
      cancelStructuredPropertyApply: async (_parent: unknown, args: { jobId: string }, context: unknown) =>
        catalog.properties.cancelApply(stateOf(context).actor, args.jobId),
      removeStructuredProperties: async (
        _parent: unknown,
        args: { input: { assetUrn: string; structuredPropertyUrns: string[] } },
        context: unknown,
      ) => {
        const { assetUrn, structuredPropertyUrns } = args.input;
        return toStructuredProperties(
          assetUrn,
          await catalog.properties.removeValues(stateOf(context).actor, assetUrn, structuredPropertyUrns),
        );
      },
    },
    // Merged over the fields every entity type shares (entity-resolvers.ts).
    StructuredPropertyEntity: {
      // `filterStatus` rides along with the definition: it depends on the property's status, not on the definition.
      definition: async (ref: PropertyRef, _args: unknown, context: unknown) => {
        const state = stateOf(context);
        const definition = await definitionOf(catalog, ref, state);
        const removed = ref.property ? ref.property.removed : (await viewOf(ref, state))?.aspects.status?.value.removed === true;
        return { ...definition, filterStatus: removed ? 'DISABLED' : 'ENABLED' };
      },
      exists: async (ref: PropertyRef, _args: unknown, context: unknown) => {
        if (ref.property) return true;
        const view = await viewOf(ref, stateOf(context));
        return view ? catalog.properties.definitionOf(view) !== undefined : false;
      },
      settings: async (ref: PropertyRef, _args: unknown, context: unknown) => {
        if (ref.property) return ref.property.settings ?? null;
        const view = await viewOf(ref, stateOf(context));
        return view ? (catalog.properties.settingsOf(view) ?? null) : null;
      },
      status: async (ref: PropertyRef, _args: unknown, context: unknown) => {
        if (ref.property) return { removed: ref.property.removed };
        const status = (await viewOf(ref, stateOf(context)))?.aspects.status?.value;
        return { removed: status?.removed === true };
      },
    },
    StructuredPropertyDefinition: {
      valueType: (definition: StructuredPropertyDefinition) => ({ urn: definition.valueType }),
      entityTypes: (definition: StructuredPropertyDefinition) => definition.entityTypes.map(entityTypeEntity),
      typeQualifier: (definition: StructuredPropertyDefinition) =>
        definition.typeQualifier ? { allowedTypes: definition.typeQualifier.allowedTypes.map(entityTypeEntity) } : null,
      allowedValues: (definition: StructuredPropertyDefinition) =>
        definition.allowedValues?.map((allowed) => ({ value: toGraphQLValue(allowed.value), description: allowed.description ?? null })) ??
        null,
      immutable: (definition: StructuredPropertyDefinition) => definition.immutable === true,
      created: (definition: StructuredPropertyDefinition) => definition.created ?? null,
      lastModified: (definition: StructuredPropertyDefinition) => definition.lastModified ?? null,
    },
    DataTypeEntity: {
      type: () => 'DATA_TYPE',
      info: ({ urn }: { urn: string }) => {
        const name = nameAfter(DATA_TYPE_URN_PREFIX, urn);
        const std = STD_DATA_TYPES[name];
        return { type: std?.type ?? 'OTHER', qualifiedName: `datahub.${name}`, displayName: std?.displayName ?? name, description: null };
      },
    },
    EntityTypeEntity: {
      type: () => 'ENTITY_TYPE',
      info: ({ urn }: { urn: string }) => {
        const name = catalog.registry.entityNameFromInput(urn) ?? nameAfter(ENTITY_TYPE_URN_PREFIX, urn);
        return { type: catalog.registry.graphqlTypeOf(name), qualifiedName: `datahub.${name}`, displayName: name, description: null };
      },
    },
    PropertyValue: {
      __resolveType: (value: GraphQLPropertyValue) => propertyValueTypeName(value),
    },
    StructuredPropertiesEntry: {
      structuredProperty: (entry: PropertyEntry): PropertyRef => refOf(entry.propertyUrn),
      values: (entry: PropertyEntry) => entry.values.map(toGraphQLValue),
      history: async (entry: PropertyEntry, _args: unknown, context: unknown) => {
        const changes = await catalog.properties.valueHistory(stateOf(context).actor, entry.associatedUrn, entry.propertyUrn);
        return changes.map((c) => ({
          values: c.values.map(toGraphQLValue),
          actor: c.setBy.actor,
          time: c.setBy.time,
          definitionVersion: c.definitionVersion,
          aspectVersion: c.aspectVersion,
          current: c.current,
        }));
      },
      valueEntities: async (entry: PropertyEntry, _args: unknown, context: unknown) => {
        const state = stateOf(context);
        const definition = await definitionOf(catalog, refOf(entry.propertyUrn), state);
        if (definition.valueType !== `${DATA_TYPE_URN_PREFIX}urn`) return null;
        const views = await state.entities.loadMany(entry.values.flatMap((v) => ('string' in v ? [v.string] : [])));
        return views.map((view) => (view ? refOfView(view) : null));
      },
    },
  };
}

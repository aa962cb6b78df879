import type { Catalog } from '../catalog';
import type { EntityView } from '../core/entities';
import { throwIfViolations, type Violation } from '../errors';
import { checkUrn, urnKey } from '../core/urn';
import { ENTITY_OBJECT_TYPES, objectTypeOf, refOf, refOfView, type EntityRef } from './entity-refs';
import { toStructuredProperties } from './property-shapes';
import type { RequestState } from './request-state';
import type { ResolverFunction } from './resolver-types';

export interface EntityResolverOptions {
  /** GraphQL object types of host entity types (entity type name → object type name); default GenericEntity. */
  entityObjectTypes?: Readonly<Record<string, string>>;
}

/** The entity's aspects: those read already, or one batched read per request level. */
export function viewOf(ref: EntityRef, state: RequestState): Promise<EntityView | null> {
  return ref.view !== undefined ? Promise.resolve(ref.view) : state.entities.load(ref.urn);
}

/** Query.entity / dataset / dataFlow, the Entity interface and the fields every entity type shares. */
export function entityResolvers(
  catalog: Catalog,
  stateOf: (context: unknown) => RequestState,
  options: EntityResolverOptions,
): Record<string, Record<string, ResolverFunction>> {
  const load = async (urn: string, context: unknown): Promise<EntityRef | null> => {
    const view = await stateOf(context).entities.load(urn);
    return view ? refOfView(view) : null;
  };
  const typed =
    (entityType: string): ResolverFunction =>
    async (_parent: unknown, args: { urn: string }, context: unknown) => {
      stateOf(context); // UNAUTHENTICATED before anything about the input
      const violations: Violation[] = [];
      checkUrn(args.urn, 'urn', violations, entityType);
      throwIfViolations(violations);
      return load(args.urn, context);
    };

  const shared: Record<string, ResolverFunction> = {
    type: (ref: EntityRef) => catalog.registry.graphqlTypeOf(ref.entityType),
    status: async (ref: EntityRef, _args: unknown, context: unknown) => {
      const status = (await viewOf(ref, stateOf(context)))?.aspects.status?.value;
      return status ? { removed: status.removed === true } : null;
    },
    structuredProperties: async (ref: EntityRef, _args: unknown, context: unknown) => {
      const view = await viewOf(ref, stateOf(context));
      return view ? toStructuredProperties(ref.urn, catalog.properties.valuesOf(view)) : null;
    },
  };
  const objectTypes = new Set([...ENTITY_OBJECT_TYPES, ...Object.values(options.entityObjectTypes ?? {})]);

  return {
    Query: {
      entity: (_parent: unknown, args: { urn: string }, context: unknown) => load(args.urn, context),
      dataset: typed('dataset'),
      dataFlow: typed('dataFlow'),
    },
    Entity: {
      __resolveType: (ref: EntityRef) => objectTypeOf(ref.entityType, options.entityObjectTypes),
    },
    ...Object.fromEntries([...objectTypes].map((name) => [name, { ...shared }])),
    CorpUser: { ...shared, username: (ref: EntityRef) => urnKey(ref.urn) },
    ResolvedAuditStamp: {
      actor: (stamp: { actor?: string }) => (stamp.actor ? refOf(stamp.actor) : null),
    },
  };
}

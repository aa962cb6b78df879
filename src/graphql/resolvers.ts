import type { GraphQLResolveInfo } from 'graphql';
import type { Catalog } from '../catalog';
import { CatalogError } from '../errors';
import { accessResolvers } from './access-resolvers';
import { entityResolvers, type EntityResolverOptions } from './entity-resolvers';
import { toGraphQLError, type GraphQLErrorHook } from './errors';
import { LongScalar } from './long-scalar';
import { propertyResolvers } from './property-resolvers';
import { createRequestStates, type RequestState } from './request-state';
import type { CatalogResolvers, ResolverFunction } from './resolver-types';
import { searchResolvers } from './search-resolvers';
import { tokenResolvers } from './token-resolvers';

export interface GraphQLOptions extends EntityResolverOptions {
  /** Reports unexpected errors (the client sees "Internal error", code INTERNAL). Default: a line on stderr. */
  onError?: GraphQLErrorHook;
}

type ResolverGroup = Record<string, Record<string, ResolverFunction>>;

function mergeGroups(groups: readonly ResolverGroup[]): ResolverGroup {
  const merged: ResolverGroup = {};
  for (const group of groups) {
    for (const [typeName, fields] of Object.entries(group)) merged[typeName] = { ...merged[typeName], ...fields };
  }
  return merged;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * The resolvers of `typeDefs` over one catalog. Every resolver translates shapes and calls the catalog
 * as `context.actorUrn`; each field's errors become GraphQL errors with `extensions.code`.
 */
export function createResolvers(catalog: Catalog, options: GraphQLOptions = {}): CatalogResolvers {
  const stateOf: (context: unknown) => RequestState = createRequestStates(catalog);
  const reported = new WeakSet<object>();
  const groups = mergeGroups([
    entityResolvers(catalog, stateOf, options),
    tokenResolvers(catalog, stateOf),
    accessResolvers(catalog, stateOf),
    propertyResolvers(catalog, stateOf),
    searchResolvers(catalog, stateOf),
  ]);

  const guard = (resolve: ResolverFunction, isMutation: boolean): ResolverFunction => {
    const fail = (error: unknown, info: GraphQLResolveInfo): never => {
      throw toGraphQLError(error, info, options.onError, reported);
    };
    return (parent, args, context, info) => {
      try {
        // A request past its deadline (`context.deadline`, set by the HTTP layer) starts no more work.
        const deadline = (context as { deadline?: unknown } | null)?.deadline;
        if (typeof deadline === 'number' && Date.now() > deadline) {
          throw new CatalogError('TIMEOUT', 'the request ran out of time before this field was resolved; ask for less at a time');
        }
        // A mutation changes what the request's loader would answer: later fields read afresh.
        if (isMutation) stateOf(context).entities.clear();
        const result = resolve(parent, args, context, info);
        return isThenable(result) ? Promise.resolve(result).catch((error: unknown) => fail(error, info)) : result;
      } catch (error) {
        return fail(error, info);
      }
    };
  };

  const resolvers: CatalogResolvers = { Long: LongScalar };
  for (const [typeName, fields] of Object.entries(groups)) {
    resolvers[typeName] = Object.fromEntries(
      Object.entries(fields).map(([field, resolve]) => [field, field.startsWith('__') ? resolve : guard(resolve, typeName === 'Mutation')]),
    );
  }
  return resolvers;
}

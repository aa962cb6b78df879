// Merging metacatalog's typeDefs and resolvers into a host application's own GraphQL schema.
// The host keeps its types and root fields; the catalog's operations sit beside them, and the host's
// types may use the catalog's (here `Me.tokens` returns a `ListAccessTokenResult`).
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import type { Catalog } from 'metacatalog';
import { createResolvers, typeDefs, type CatalogGraphQLContext } from 'metacatalog/graphql';

/** The host's context: the catalog's `actorUrn` and whatever else the host needs per request. */
export interface HostContext extends CatalogGraphQLContext {
  requestId: string;
}

const hostTypeDefs = /* GraphQL */ `
  type Query {
    "The caller, as the host sees it."
    me: Me!
    "The host's own field."
    requestId: String!
  }

  type Me {
    actorUrn: String
    privileges: [String!]!
    "The caller's own access tokens (a catalog type)."
    tokens: ListAccessTokenResult!
  }
`;

export function createHostSchema(catalog: Catalog, onError?: (error: unknown) => void): GraphQLSchema {
  const hostResolvers = {
    Query: {
      me: (_parent: unknown, _args: unknown, context: HostContext) => ({ actorUrn: context.actorUrn ?? null }),
      requestId: (_parent: unknown, _args: unknown, context: HostContext) => context.requestId,
    },
    Me: {
      privileges: (me: { actorUrn: string | null }) => (me.actorUrn ? catalog.privilegesOf(me.actorUrn) : []),
      // The host calls the catalog itself; the catalog still decides who may list what.
      tokens: (me: { actorUrn: string | null }) =>
        catalog.tokens.list(me.actorUrn ?? '', { filters: [{ field: 'ownerUrn', values: [me.actorUrn ?? ''] }] }),
    },
  };
  return makeExecutableSchema<HostContext>({
    typeDefs: [hostTypeDefs, typeDefs],
    resolvers: [hostResolvers, createResolvers(catalog, { onError })],
  });
}

/**
 * `metacatalog/graphql`: the GraphQL schema factory (`createGraphQLSchema`, `typeDefs`,
 * `createResolvers`) arrives with the GraphQL issue. The entry point exists from the start so that
 * the exports map is stable; it loads nothing yet.
 */
export const GRAPHQL_ENTRY_VERSION = 0;

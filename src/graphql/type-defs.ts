import access from './access.graphql';
import accessTokens from './access-tokens.graphql';
import entities from './entities.graphql';
import search from './search.graphql';
import structuredProperties from './structured-properties.graphql';

/**
 * The catalog's GraphQL SDL: `type Query` and `type Mutation` with the operations of the established
 * platform's API (DataHub's names and input shapes), ready to merge into a host schema.
 */
export const typeDefs: string = [entities, accessTokens, access, structuredProperties, search].join('\n');

import type { Catalog } from '../catalog';
import type { AccessTokenMetadata, CreateAccessTokenInput, ListAccessTokensInput } from '../core/tokens';
import type { RequestState } from './request-state';
import type { ResolverFunction } from './resolver-types';

/** Access tokens: each operation is one call of `catalog.tokens`. */
export function tokenResolvers(
  catalog: Catalog,
  stateOf: (context: unknown) => RequestState,
): Record<string, Record<string, ResolverFunction>> {
  return {
    Query: {
      listAccessTokens: (_parent: unknown, args: { input: ListAccessTokensInput }, context: unknown) =>
        catalog.tokens.list(stateOf(context).actor, args.input),
      getAccessTokenMetadata: (_parent: unknown, args: { token: string }, context: unknown) =>
        catalog.tokens.getMetadata(stateOf(context).actor, args.token),
    },
    Mutation: {
      createAccessToken: (_parent: unknown, args: { input: CreateAccessTokenInput }, context: unknown) =>
        catalog.tokens.create(stateOf(context).actor, args.input),
      revokeAccessToken: (_parent: unknown, args: { tokenId: string }, context: unknown) =>
        catalog.tokens.revoke(stateOf(context).actor, args.tokenId),
    },
    AccessTokenMetadata: {
      type: () => 'ACCESS_TOKEN',
      tokenType: (metadata: AccessTokenMetadata) => metadata.type,
    },
  };
}

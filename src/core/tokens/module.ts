import type { EntityDeleter } from '../entities/owner';
import type { WritePipeline } from '../entities/write-pipeline';
import type { DomainModule, DomainParts } from '../module';
import type { TokenOptions } from './model';
import { tokenDeleter, tokenOwners } from './owner';
import { TokenService } from './service';
import type { ParsedTokenSigning } from './signing-keys';

/** What the tokens service is built from. */
interface TokensDeps {
  pipeline: WritePipeline;
  /** Resolves once the adapter is open (verification waits for it). */
  ready: Promise<void>;
  signing?: ParsedTokenSigning;
  tokens?: TokenOptions;
}

/** The tokens domain as createCatalog composes it. */
export interface TokensParts extends DomainParts<TokensDeps, TokenService> {
  deleter(service: TokenService): EntityDeleter;
}

/** The tokens domain: the owner of token records, `catalog.tokens`, the removal of expired tokens. */
export const tokensModule: DomainModule<TokensParts> = {
  name: 'tokens',
  build: (ctx) => ({
    owners: tokenOwners(ctx),
    createService: ({ pipeline, ready, signing, tokens }) =>
      new TokenService(ctx, { ready, ...(signing ? { signing } : {}), tokens }, pipeline),
    jobs: (service) => service.cleanup.jobs(),
    deleter: (service) => tokenDeleter(service),
  }),
};

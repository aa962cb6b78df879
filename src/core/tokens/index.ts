// The public face of the tokens domain: what transports, the test kit and the package root use.
export { REMOVE_EXPIRED_TOKENS_JOB } from './cleanup';
export { ACCESS_TOKEN_DURATIONS, ACCESS_TOKEN_DURATION_MS, ACCESS_TOKEN_TYPES } from './model';
export type {
  AccessTokenDuration,
  AccessTokenList,
  AccessTokenMetadata,
  AccessTokenType,
  AccessTokens,
  BootstrapTokenInput,
  CreateAccessTokenInput,
  EnsureBootstrapTokenInput,
  CreatedAccessToken,
  ListAccessTokensInput,
  ReadRevocationsInput,
  RevokedToken,
  TokenOptions,
  TokenRevocationPage,
  VerifiedAccessToken,
} from './model';
export { parseTokenSigning, TOKEN_SIGNING_ALGORITHMS } from './signing-keys';
export type {
  JsonWebKeySet,
  ParsedTokenSigning,
  PublicJwk,
  TokenSigningAlgorithm,
  TokenSigningJwk,
  TokenSigningKeyInput,
  TokenSigningOptions,
} from './signing-keys';
export { TokenService, checkTokenOptions } from './service';
export { tokenOwners } from './owner';
export { tokensModule } from './module';
export type { TokensDeps, TokensParts } from './module';
export { ServiceAccountService, serviceAccountOwners } from './service-accounts';
export type { CreateServiceAccountInput, ServiceAccounts } from './service-accounts';
export { serviceAccountsModule } from './service-accounts-module';

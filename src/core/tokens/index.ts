// The public face of the tokens domain: what transports, the test kit and the package root use.
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
export { checkTokenOptions } from './service';
export { tokensModule } from './module';
export type { CreateServiceAccountInput, ServiceAccounts } from './service-accounts';
export { serviceAccountsModule } from './service-accounts-module';

import type { Actor } from '../access/actor';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { JsonObject, StoredEntity } from '../../adapter/types';
import type { FacetFilterInput } from '../search/filters';
import type { JsonWebKeySet } from './signing-keys';

/** The token record: entity type, aspect and where the salted hash is kept beside the aspect value. */
export const TOKEN_ENTITY = 'accessToken';
export const TOKEN_ASPECT = 'ServiceAccessTokenInfo';
/** Every stored token with its record aspect. */
export const TOKEN_SCAN = { entityType: TOKEN_ENTITY, requireAspect: TOKEN_ASPECT, aspectNames: [TOKEN_ASPECT] } as const;
const TOKEN_HASH_METADATA = 'tokenHash';
const TOKEN_SALT_METADATA = 'tokenSalt';
/** Set on the record by a revocation; the record is then kept until the token expires, for the revocation feed. */
export const TOKEN_REVOKED_AT = 'revokedAt';

export const ACCESS_TOKEN_TYPES = ['PERSONAL'] as const;
export type AccessTokenType = (typeof ACCESS_TOKEN_TYPES)[number];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Lifetimes in milliseconds; a month is 30 days and a year 365. `null`: never expires. */
export const ACCESS_TOKEN_DURATION_MS = {
  ONE_HOUR: HOUR,
  ONE_DAY: DAY,
  ONE_WEEK: 7 * DAY,
  ONE_MONTH: 30 * DAY,
  THREE_MONTHS: 90 * DAY,
  SIX_MONTHS: 180 * DAY,
  ONE_YEAR: 365 * DAY,
  NO_EXPIRY: null,
} as const satisfies Record<string, number | null>;

export type AccessTokenDuration = keyof typeof ACCESS_TOKEN_DURATION_MS;
export const ACCESS_TOKEN_DURATIONS = Object.keys(ACCESS_TOKEN_DURATION_MS) as AccessTokenDuration[];

/** What `createAccessToken` takes (its GraphQL input: docs/graphql.md). */
export interface CreateAccessTokenInput {
  type: AccessTokenType;
  /** The actor the token acts as. */
  actorUrn: string;
  duration: AccessTokenDuration;
  name: string;
  description?: string | null;
  /**
   * The token's scopes: privilege names (or `READ_ONLY`, reads only), each held by the actor. A request
   * made with the token may use only those of them the actor still holds. Left out: the actor's privileges.
   */
  privileges?: readonly string[] | null;
}

/** A token's record as callers see it. Times are epoch milliseconds. */
export interface AccessTokenMetadata {
  urn: string;
  id: string;
  type: AccessTokenType;
  name: string;
  description: string | null;
  /** The actor the token acts as. */
  actorUrn: string;
  /** Who created it. */
  ownerUrn: string;
  createdAt: number;
  /** `null`: never expires. */
  expiresAt: number | null;
  /** Last successful verification, recorded at most once a minute; `null`: never used. */
  lastUsedAt: number | null;
  /** The token's scopes; `null`: unscoped (the actor's privileges). */
  privileges: string[] | null;
}

/** The secret (returned only here, once) and its record. */
export interface CreatedAccessToken {
  accessToken: string;
  metadata: AccessTokenMetadata;
}

export interface ListAccessTokensInput {
  start?: number | null;
  count?: number | null;
  filters?: readonly FacetFilterInput[] | null;
}

export interface AccessTokenList {
  start: number;
  /** Number of tokens in this page. */
  count: number;
  /** Number of tokens that match the filters. */
  total: number;
  tokens: AccessTokenMetadata[];
}

/** Who a verified token speaks for. */
export interface VerifiedAccessToken {
  actorUrn: string;
  /** The token's scopes; `null` when unscoped. Pass `{ urn: actorUrn, scopes: privileges }` as the actor of the request's calls. */
  privileges: string[] | null;
  tokenId: string;
  type: AccessTokenType;
  /** Epoch milliseconds; `null`: never expires. */
  expiresAt: number | null;
}

export interface BootstrapTokenInput {
  /** Must be one of the catalog's `superUsers`; the token acts as and is owned by it. */
  actorUrn: string;
  /** Default `bootstrap`. */
  name?: string;
  /** Default `ONE_DAY`. */
  duration?: AccessTokenDuration;
  description?: string;
}

/** `catalog.tokens.ensureBootstrapToken`: when an application start must hand its operator a first admin token. */
export interface EnsureBootstrapTokenInput extends BootstrapTokenInput {
  /** The storage (or the signing key) was created by this start: its operator has no token yet. */
  fresh?: boolean;
  /** Issue one although the catalog holds tokens (the operator lost theirs). */
  force?: boolean;
}

/** `createCatalog({ tokens })`. */
export interface TokenOptions {
  /** Allow `NO_EXPIRY` tokens (default false). */
  allowNoExpiry?: boolean;
  /** How often the clean-up of expired tokens' records is queued, in ms (default one hour). */
  cleanupIntervalMs?: number;
}

export interface ReadRevocationsInput {
  /** The `next` of an earlier answer; absent: from the start. */
  after?: string | null;
  /** 1..1000, default 100. */
  limit?: number | null;
}

/** A revoked token that has not expired yet: deny `jti` = `tokenId` until `expiresAt` (epoch ms; `null`: never expires). */
export interface RevokedToken {
  tokenId: string;
  expiresAt: number | null;
}

/** One page of the revocation feed; pass `next` as `after` for the following page, or later for newer revocations. */
export interface TokenRevocationPage {
  revoked: RevokedToken[];
  next: string;
}

/** `catalog.tokens`: every rule of access tokens. Transports map their operations onto these. */
export interface AccessTokens {
  /** Creates a token; GENERATE_PERSONAL_ACCESS_TOKENS for oneself, MANAGE_ACCESS_TOKENS for anyone. */
  create(actor: Actor, input: CreateAccessTokenInput): Promise<CreatedAccessToken>;
  /** Lists token records; without MANAGE_ACCESS_TOKENS a filter on `ownerUrn` or `actorUrn` equal to the caller is required. */
  list(actor: Actor, input?: ListAccessTokensInput): Promise<AccessTokenList>;
  /**
   * Revokes a token (its owner or a manager): it fails verification at once, and its record is kept, marked,
   * until the token expires (the revocation feed). `NOT_FOUND` for an unknown or already revoked id. Accepts the id or the URN.
   */
  revoke(actor: Actor, tokenId: string): Promise<true>;
  /**
   * The revoked tokens that have not expired yet, oldest revocation first (VIEW_TOKEN_REVOCATIONS), for
   * services that verify tokens themselves and keep a deny-list. Revocations of the last minute come again
   * on the next read after a short page (see docs/tokens-and-policies.md): treat the list as a set.
   */
  revocations(actor: Actor, input?: ReadRevocationsInput): Promise<TokenRevocationPage>;
  /** The public keys that verify this catalog's tokens (EdDSA, ES256); NOT_FOUND with HS256, whose secret is never published. */
  jwks(): Promise<JsonWebKeySet>;
  /** Checks a token; `UNAUTHENTICATED` with `reason` malformed, bad_signature, expired or revoked. */
  verify(token: string): Promise<VerifiedAccessToken>;
  /** The record of a token given as its secret (MANAGE_ACCESS_TOKENS); an invalid token is INVALID_INPUT with the same `reason`. */
  getMetadata(actor: Actor, token: string): Promise<AccessTokenMetadata>;
  /** Removes the records of expired tokens now (MANAGE_ACCESS_TOKENS); returns how many went. */
  removeExpired(actor: Actor): Promise<number>;
  /** In-process only, never exposed by a transport: a token for a configured super user. */
  issueBootstrapToken(input: BootstrapTokenInput): Promise<CreatedAccessToken>;
  /**
   * In-process only: issues a bootstrap token when `force` is set, when the storage is `fresh`, or when the
   * catalog holds no access token at all (a first start that failed before showing its token must show
   * one at the next start); otherwise undefined.
   */
  ensureBootstrapToken(input: EnsureBootstrapTokenInput): Promise<CreatedAccessToken | undefined>;
}

/** Fields a listing filter may name, and how they compare. */
export const TOKEN_FILTER_FIELDS = {
  urn: 'string',
  id: 'string',
  type: 'string',
  name: 'string',
  description: 'string',
  actorUrn: 'string',
  ownerUrn: 'string',
  createdAt: 'number',
  expiresAt: 'number',
  lastUsedAt: 'number',
} as const;

export function tokenUrn(id: string): string {
  return `urn:li:${TOKEN_ENTITY}:${id}`;
}

/** When the record's token was revoked (epoch ms), or undefined while it is live. */
export function revokedAtOf(entity: StoredEntity): number | undefined {
  const revokedAt = entity.aspects[TOKEN_ASPECT]?.value[TOKEN_REVOKED_AT];
  return typeof revokedAt === 'number' ? revokedAt : undefined;
}

/** The record's expiry, revoked or not (epoch ms; `null`: never expires). */
export function expiresAtOf(entity: StoredEntity): number | null {
  const expiresAt = entity.aspects[TOKEN_ASPECT]?.value.expiresAt;
  return typeof expiresAt === 'number' ? expiresAt : null;
}

/** The metadata of a live token's record; undefined when it has no token aspect or the token was revoked. */
export function toMetadata(entity: StoredEntity): AccessTokenMetadata | undefined {
  const value = entity.aspects[TOKEN_ASPECT]?.value;
  if (!value || revokedAtOf(entity) !== undefined) return undefined;
  const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  return {
    urn: entity.urn,
    id: entity.urn.slice(tokenUrn('').length),
    type: 'PERSONAL',
    name: String(value.name ?? ''),
    description: typeof value.description === 'string' ? value.description : null,
    actorUrn: String(value.actorUrn ?? ''),
    ownerUrn: String(value.ownerUrn ?? ''),
    createdAt: num(value.createdAt) ?? 0,
    expiresAt: num(value.expiresAt),
    lastUsedAt: num(value.lastUsedAt),
    privileges: Array.isArray(value.privileges) ? value.privileges.map(String) : null,
  };
}

/** The stored aspect value of a token record (absent fields are left out, not null). */
export function toAspectValue(metadata: AccessTokenMetadata): JsonObject {
  return {
    type: metadata.type,
    name: metadata.name,
    ...(metadata.description !== null ? { description: metadata.description } : {}),
    actorUrn: metadata.actorUrn,
    ownerUrn: metadata.ownerUrn,
    createdAt: metadata.createdAt,
    ...(metadata.expiresAt !== null ? { expiresAt: metadata.expiresAt } : {}),
    ...(metadata.lastUsedAt !== null ? { lastUsedAt: metadata.lastUsedAt } : {}),
    ...(metadata.privileges !== null ? { privileges: [...metadata.privileges] } : {}),
  };
}

/** `sha256(salt || token)` with a fresh random salt; both kept beside the record, never the token. */
export function hashNewToken(token: string): JsonObject {
  const salt = randomBytes(16);
  const hash = createHash('sha256').update(salt).update(token, 'utf8').digest('hex');
  return { [TOKEN_HASH_METADATA]: hash, [TOKEN_SALT_METADATA]: salt.toString('hex') };
}

/** Whether the token is the one whose salted hash the record keeps (constant-time). */
export function matchesStoredHash(token: string, systemMetadata: JsonObject | undefined): boolean {
  const hash = systemMetadata?.[TOKEN_HASH_METADATA];
  const salt = systemMetadata?.[TOKEN_SALT_METADATA];
  if (typeof hash !== 'string' || typeof salt !== 'string') return false;
  const expected = Buffer.from(hash, 'hex');
  const actual = createHash('sha256').update(Buffer.from(salt, 'hex')).update(token, 'utf8').digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

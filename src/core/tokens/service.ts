import { isScopedActor, READ_ONLY, type Actor } from '../access/actor';
import { isPrivilege, PRIVILEGES } from '../access/privileges';
import { randomUUID } from 'node:crypto';
import type { StoredEntity } from '../../adapter/types';
import type { Admission, WritePipeline } from '../entities/write-pipeline';
import type { TokenEdit } from './owner';
import type { CatalogContext } from '../context';
import { lazySchemaCheck } from '../validation';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { isTokenId, SigningKeys, TOKEN_ISSUER, tokenFailure } from './jwt';
import { readRevocations } from './revocations';
import type { JsonWebKeySet, ParsedTokenSigning } from './signing-keys';
import { checkNotBlank, createAccessTokenSchema } from '../validation/schemas/access';
import { TokenCleanup } from './cleanup';
import { listTokens } from './listing';
import {
  ACCESS_TOKEN_DURATION_MS,
  hashNewToken,
  matchesStoredHash,
  toAspectValue,
  toMetadata,
  TOKEN_ASPECT,
  tokenUrn,
  type AccessTokenList,
  type AccessTokenMetadata,
  type AccessTokens,
  type BootstrapTokenInput,
  type EnsureBootstrapTokenInput,
  type CreateAccessTokenInput,
  type CreatedAccessToken,
  type ListAccessTokensInput,
  type ReadRevocationsInput,
  type TokenOptions,
  type TokenRevocationPage,
  type VerifiedAccessToken,
} from './model';
import { checkUrn } from '../urn';
import { LastUseThrottle } from './last-use';
import { TokenRecordCache } from './records';

/** `lastUsedAt` is written at most this often per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

const checkCreateShape = lazySchemaCheck(createAccessTokenSchema);

export interface TokenServiceOptions {
  /** Resolves once the adapter is open (verification has no actor to authenticate, but must wait too). */
  ready: Promise<void>;
  /** The checked signing configuration; absent when none is configured (token creation and verification are then UNSUPPORTED). */
  signing?: ParsedTokenSigning;
  tokens?: TokenOptions;
}

/** INVALID_INPUT naming each bad `tokens` option. */
export function checkTokenOptions(options: TokenOptions | undefined): void {
  if (options === undefined) return;
  const violations: Violation[] = [];
  if (typeof options !== 'object' || options === null) violations.push({ path: 'tokens', message: 'must be an object' });
  else {
    if (options.allowNoExpiry !== undefined && typeof options.allowNoExpiry !== 'boolean') {
      violations.push({ path: 'tokens.allowNoExpiry', message: 'must be a boolean' });
    }
    const interval = options.cleanupIntervalMs;
    if (interval !== undefined && (!Number.isInteger(interval) || interval < 1000)) {
      violations.push({ path: 'tokens.cleanupIntervalMs', message: 'must be an integer of at least 1000 (ms)' });
    }
  }
  throwIfViolations(violations, 'invalid catalog options');
}

/**
 * Access tokens: JWTs (HS256, EdDSA or ES256) of which only a salted hash is stored, as the
 * `ServiceAccessTokenInfo` aspect of `urn:li:accessToken:<jti>`. Every call checks the record as stored
 * now, so a revocation (the record is marked revoked) takes effect at once, in every process sharing the
 * store: read again after any committed write, kept while the store's change token says nothing changed
 * (records.ts).
 */
export class TokenService implements AccessTokens {
  readonly cleanup: TokenCleanup;
  private readonly keys: SigningKeys;
  private readonly allowNoExpiry: boolean;
  private readonly lastUse = new LastUseThrottle(LAST_USED_RESOLUTION_MS);
  private readonly records: TokenRecordCache;

  constructor(
    private readonly ctx: CatalogContext,
    private readonly options: TokenServiceOptions,
    /** The one write path (built by createCatalog with the token owner). */
    private readonly pipeline: WritePipeline,
  ) {
    this.keys = new SigningKeys(options.signing ?? []);
    this.records = new TokenRecordCache(ctx.adapter, TOKEN_ASPECT);
    this.allowNoExpiry = options.tokens?.allowNoExpiry === true;
    this.cleanup = new TokenCleanup(ctx, pipeline, options.tokens?.cleanupIntervalMs);
  }

  async create(actor: Actor, input: CreateAccessTokenInput): Promise<CreatedAccessToken> {
    // Authenticated once, by the write path; who may create which token is this service's rule (checked below).
    const admitted = await this.pipeline.admit(actor, []);
    const caller = admitted.who;
    this.requireKeys('create access tokens');
    this.checkCreateInput(input);
    if (input.actorUrn === caller) {
      if (!(await this.ctx.authorizer.has(actor, 'MANAGE_ACCESS_TOKENS'))) {
        await this.ctx.authorizer.require(actor, 'GENERATE_PERSONAL_ACCESS_TOKENS', 'create an access token for oneself');
      }
    } else {
      await this.ctx.authorizer.require(actor, 'MANAGE_ACCESS_TOKENS', 'create an access token that acts as another actor');
    }
    await this.checkScopes(actor as Actor, input);
    // A disabled service account gets no new token until it is enabled.
    if (await this.ctx.authorizer.isDisabled(input.actorUrn))
      throw new CatalogError('FORBIDDEN', `${input.actorUrn} is a disabled service account: enable it before creating tokens for it`, {
        reason: 'disabled',
      });
    return this.issue(admitted, caller, input);
  }

  list(actor: Actor, input: ListAccessTokensInput = {}): Promise<AccessTokenList> {
    return listTokens(this.ctx, actor, input);
  }

  async revoke(actor: Actor, tokenId: string): Promise<true> {
    const admitted = await this.pipeline.admit(actor, []);
    const caller = admitted.who;
    const id = typeof tokenId === 'string' && tokenId.startsWith(tokenUrn('')) ? tokenId.slice(tokenUrn('').length) : tokenId;
    if (!isTokenId(id)) {
      const message = 'must be a token id (letters, digits and "-") or an accessToken URN';
      throw new CatalogError('INVALID_INPUT', `tokenId ${message}`, { details: [{ path: 'tokenId', message }] });
    }
    const manager = await this.ctx.authorizer.has(actor, 'MANAGE_ACCESS_TOKENS');
    if (!manager) await this.ctx.authorizer.require(actor, 'GENERATE_PERSONAL_ACCESS_TOKENS', 'revoke access tokens');
    await this.writeEdit(admitted, tokenUrn(id), { kind: 'revoke', id, caller, manager });
    return true;
  }

  revocations(actor: Actor, input?: ReadRevocationsInput): Promise<TokenRevocationPage> {
    return readRevocations(this.ctx, actor, input);
  }

  async jwks(): Promise<JsonWebKeySet> {
    const keys = this.keys.size > 0 ? this.keys.jwks() : undefined;
    if (!keys) {
      const why =
        this.keys.size === 0
          ? 'this catalog has no token signing key'
          : 'this catalog signs access tokens with HS256, a shared secret that is never published';
      throw new CatalogError(
        'NOT_FOUND',
        `no public keys: ${why}; configure tokenSigning with algorithm EdDSA or ES256 for tokens that other services verify with a public key`,
      );
    }
    return keys;
  }

  async verify(token: string): Promise<VerifiedAccessToken> {
    await this.options.ready;
    const { entity, metadata } = await this.check(token);
    await this.recordUse(entity, metadata);
    return {
      actorUrn: metadata.actorUrn,
      privileges: metadata.privileges,
      tokenId: metadata.id,
      type: metadata.type,
      expiresAt: metadata.expiresAt,
    };
  }

  async getMetadata(actor: Actor, token: string): Promise<AccessTokenMetadata> {
    await this.ctx.authenticate(actor);
    await this.ctx.authorizer.require(actor, 'MANAGE_ACCESS_TOKENS', 'read the metadata of an access token');
    try {
      return (await this.check(token)).metadata;
    } catch (error) {
      // The caller is authenticated; it is the token it passed that is bad.
      if (error instanceof CatalogError && error.code === 'UNAUTHENTICATED') {
        throw new CatalogError('INVALID_INPUT', error.message, {
          reason: error.reason,
          details: [{ path: 'token', message: error.message }],
        });
      }
      throw error;
    }
  }

  removeExpired(actor: Actor): Promise<number> {
    return this.cleanup.removeExpiredAs(actor);
  }

  async issueBootstrapToken(input: BootstrapTokenInput): Promise<CreatedAccessToken> {
    await this.options.ready;
    this.requireKeys('issue a bootstrap token');
    const actorUrn = input?.actorUrn;
    const violations: Violation[] = [];
    checkUrn(actorUrn, 'actorUrn', violations);
    throwIfViolations(violations, 'invalid bootstrap token request');
    if (!this.ctx.authorizer.isSuperUser(actorUrn)) {
      throw new CatalogError(
        'FORBIDDEN',
        `${actorUrn} is not one of the catalog's superUsers; a bootstrap token is issued only for a super user`,
        {
          reason: 'superUsers',
        },
      );
    }
    const request: CreateAccessTokenInput = {
      type: 'PERSONAL',
      actorUrn,
      duration: input.duration ?? 'ONE_DAY',
      name: input.name ?? 'bootstrap',
      ...(input.description !== undefined ? { description: input.description } : {}),
    };
    this.checkCreateInput(request);
    return this.issue(actorUrn, actorUrn, request);
  }

  async ensureBootstrapToken(input: EnsureBootstrapTokenInput): Promise<CreatedAccessToken | undefined> {
    const { fresh, force, ...request } = input;
    const wanted = fresh === true || force === true || (await this.list(request.actorUrn, { count: 1 })).total === 0;
    return wanted ? this.issueBootstrapToken(request) : undefined;
  }

  // --- internals ----------------------------------------------------------------------------

  /**
   * A token's scopes must be privileges the actor it acts as holds now (or `READ_ONLY`), and no wider than
   * the scopes of the token the request itself was made with.
   */
  private async checkScopes(caller: Actor, input: CreateAccessTokenInput): Promise<void> {
    if (input.privileges === undefined || input.privileges === null) {
      if (isScopedActor(caller)) {
        throw new CatalogError(
          'FORBIDDEN',
          `a scoped access token cannot create an unscoped one: give privileges within ${caller.scopes.join(', ') || 'READ_ONLY'}`,
          {
            reason: 'scopes',
            details: [
              { path: '/privileges', message: `is required from a scoped token: a subset of ${caller.scopes.join(', ') || 'READ_ONLY'}` },
            ],
          },
        );
      }
      return;
    }
    const violations: Violation[] = [];
    const held = await this.ctx.authorizer.privilegesOf(input.actorUrn);
    input.privileges.forEach((scope, i) => {
      if (scope === READ_ONLY) return;
      if (!isPrivilege(scope))
        violations.push({
          path: `/privileges/${i}`,
          message: `unknown privilege "${scope}"; known: ${[...PRIVILEGES, READ_ONLY].join(', ')}`,
        });
      else if (!held.has(scope)) violations.push({ path: `/privileges/${i}`, message: `${input.actorUrn} does not hold ${scope}` });
    });
    throwIfViolations(violations, 'invalid token scopes');
    if (isScopedActor(caller)) {
      const wider = input.privileges.filter((scope) => scope !== READ_ONLY && !caller.scopes.includes(scope));
      if (wider.length) {
        throw new CatalogError(
          'FORBIDDEN',
          `a scoped access token cannot create a token with wider scopes: ${wider.join(', ')} ${wider.length === 1 ? 'is' : 'are'} not among its own`,
          {
            reason: 'scopes',
          },
        );
      }
    }
  }

  private requireKeys(what: string): void {
    if (this.keys.size === 0) {
      throw new CatalogError(
        'UNSUPPORTED',
        `cannot ${what}: configure tokenSigningKey (an HS256 secret of at least 32 bytes) or tokenSigning in createCatalog`,
      );
    }
  }

  private checkCreateInput(input: CreateAccessTokenInput): void {
    const violations: Violation[] = [];
    if (typeof input === 'object' && input !== null) checkNotBlank(input.name, '/name', violations);
    const shape = checkCreateShape(input);
    if (shape.length) violations.push(...shape);
    else {
      checkUrn(input.actorUrn, '/actorUrn', violations, 'corpuser');
      if (input.duration === 'NO_EXPIRY' && !this.allowNoExpiry) {
        violations.push({
          path: '/duration',
          message: 'NO_EXPIRY is not allowed: the catalog is not configured with tokens.allowNoExpiry',
        });
      }
    }
    throwIfViolations(violations, 'invalid access token request');
  }

  /** One edit of one token record through the write path (the token owner plans it). */
  private async writeEdit(actor: Actor | Admission, urn: string, edit: TokenEdit): Promise<void> {
    await this.pipeline.write(actor, [{ op: 'edit', urn, aspect: TOKEN_ASPECT, edit, path: '' }], {
      message: `invalid write of ${urn}`,
    });
  }

  /** Signs a token for an authorized request and stores its record; the secret leaves only in the result. */
  private async issue(actor: Actor | Admission, owner: string, input: CreateAccessTokenInput): Promise<CreatedAccessToken> {
    const now = this.ctx.clock();
    const id = randomUUID();
    const urn = tokenUrn(id);
    const lifetime = ACCESS_TOKEN_DURATION_MS[input.duration];
    const expiresAt = lifetime === null ? null : now + lifetime;
    const accessToken = await this.keys.sign({
      sub: input.actorUrn,
      jti: id,
      type: input.type,
      iat: Math.floor(now / 1000),
      ...(expiresAt === null ? {} : { exp: Math.ceil(expiresAt / 1000) }),
      iss: TOKEN_ISSUER,
    });
    const metadata: AccessTokenMetadata = {
      urn,
      id,
      type: input.type,
      name: input.name,
      description: input.description ?? null,
      actorUrn: input.actorUrn,
      ownerUrn: owner,
      createdAt: now,
      expiresAt,
      lastUsedAt: null,
      privileges: input.privileges ? [...input.privileges] : null,
    };
    await this.writeEdit(actor, urn, { kind: 'issue', id, value: toAspectValue(metadata), systemMetadata: hashNewToken(accessToken) });
    return { accessToken, metadata };
  }

  /** Signature, claims, expiry (catalog clock), then the record: gone means revoked. */
  private async check(token: string): Promise<{ entity: StoredEntity; metadata: AccessTokenMetadata }> {
    this.requireKeys('verify access tokens');
    const claims = await this.keys.verify(token);
    const now = this.ctx.clock();
    if (claims.exp !== undefined && claims.exp * 1000 <= now) throw tokenFailure('expired', 'the access token has expired');
    const entity = await this.records.read(tokenUrn(claims.jti));
    const metadata = entity && toMetadata(entity);
    if (!entity || !metadata || !matchesStoredHash(token, entity.aspects[TOKEN_ASPECT]?.systemMetadata)) {
      throw tokenFailure('revoked', 'the access token was revoked (or is unknown to this catalog)');
    }
    if (metadata.expiresAt !== null && metadata.expiresAt <= now) throw tokenFailure('expired', 'the access token has expired');
    return { entity, metadata };
  }

  /** Records `lastUsedAt` at most once a minute; never fails the verification. */
  private async recordUse(entity: StoredEntity, metadata: AccessTokenMetadata): Promise<void> {
    const now = this.ctx.clock();
    // A clock that went back never moves lastUsedAt back either.
    if (metadata.lastUsedAt !== null && now - metadata.lastUsedAt < LAST_USED_RESOLUTION_MS) return;
    // Once per token per resolution in this process, and not while the storage refuses writes.
    if (!this.lastUse.shouldTry(metadata.id, now)) return;
    try {
      // Bookkeeping stamped as the token's actor: the token owner plans it on the record as the unit of work reads it.
      const edit: TokenEdit = { kind: 'recordUse', now, resolutionMs: LAST_USED_RESOLUTION_MS };
      await this.pipeline.bookkeep(metadata.actorUrn, [{ op: 'edit', urn: entity.urn, aspect: TOKEN_ASPECT, edit, path: '' }], {
        message: `cannot record the use of access token ${metadata.id}`,
      });
    } catch (error) {
      if (!(error instanceof CatalogError && error.code === 'CONFLICT')) {
        this.lastUse.failed(now);
        this.ctx.reportError(error, `recording the use of access token ${metadata.id}`);
      }
    }
  }
}

import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import type { StoredEntity } from '../../adapter/types';
import { lazySchemaCheck } from '../validation';
import { throwIfViolations, type Violation } from '../../errors';
import { checkFacetFilters, matchesRecord, resolveRecordConditions, type FacetCondition, type RecordValue } from '../search/filters';
import { listInputSchema } from '../validation/schemas/access';
import { scanPages } from '../../adapter/scan-pages';
import {
  toMetadata,
  TOKEN_FILTER_FIELDS,
  TOKEN_SCAN,
  type AccessTokenList,
  type AccessTokenMetadata,
  type ListAccessTokensInput,
} from './model';

const DEFAULT_TOKEN_PAGE = 20;
const MAX_TOKEN_PAGE = 1000;
const SCAN_PAGE = 500;

const checkListShape = lazySchemaCheck(listInputSchema(MAX_TOKEN_PAGE));

/** A filter that limits the listing to the caller: `ownerUrn` or `actorUrn`, equal to it, not negated. */
function isSelfFilter(condition: FacetCondition, caller: string): boolean {
  return (
    (condition.field === 'ownerUrn' || condition.field === 'actorUrn') &&
    (condition.operator === 'EQUAL' || condition.operator === 'IN') &&
    !condition.negated &&
    condition.values.length > 0 &&
    condition.values.every((v) => v === caller)
  );
}

/** Never-expiring first, then the latest expiry; then the newest; then by URN so pages are stable. */
function byExpiryDescending(a: AccessTokenMetadata, b: AccessTokenMetadata): number {
  const ea = a.expiresAt ?? Number.POSITIVE_INFINITY;
  const eb = b.expiresAt ?? Number.POSITIVE_INFINITY;
  if (ea !== eb) return eb > ea ? 1 : -1;
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0;
}

/** Every stored token entity with its record aspect, in URN order, a page at a time (token counts are small: see docs/tokens-and-policies.md). */
export async function* tokenEntities(ctx: CatalogContext): AsyncGenerator<StoredEntity> {
  for await (const page of scanPages(ctx.adapter, TOKEN_SCAN, SCAN_PAGE)) yield* page;
}

/** Every token record, in URN order. */
async function scanTokenRecords(ctx: CatalogContext): Promise<AccessTokenMetadata[]> {
  const out: AccessTokenMetadata[] = [];
  for await (const entity of tokenEntities(ctx)) {
    const metadata = toMetadata(entity);
    if (metadata) out.push(metadata);
  }
  return out;
}

/**
 * Lists token records. Without MANAGE_ACCESS_TOKENS the caller needs GENERATE_PERSONAL_ACCESS_TOKENS
 * and a filter on `ownerUrn` or `actorUrn` equal to itself; an empty filter list means every actor's
 * tokens. Filters are evaluated here, over the scanned records.
 */
export async function listTokens(ctx: CatalogContext, actor: Actor, input: ListAccessTokensInput): Promise<AccessTokenList> {
  const caller = await ctx.authenticate(actor);
  const request = input ?? {};
  const violations: Violation[] = [];
  violations.push(...checkListShape(request));
  const filters = typeof request === 'object' && request !== null ? request.filters : undefined;
  const conditions: FacetCondition[] = checkFacetFilters(filters, '/filters', violations);
  const resolved = resolveRecordConditions(conditions, TOKEN_FILTER_FIELDS, '/filters', violations);
  throwIfViolations(violations, 'invalid access token listing');

  // A listing limited to oneself needs GENERATE_PERSONAL_ACCESS_TOKENS; any other needs MANAGE_ACCESS_TOKENS.
  if (!conditions.some((c) => isSelfFilter(c, caller))) {
    await ctx.authorizer.require(
      caller,
      'MANAGE_ACCESS_TOKENS',
      "list access tokens without a filter on ownerUrn or actorUrn equal to oneself (that lists other actors' tokens)",
    );
  } else if (!(await ctx.authorizer.has(actor as Actor, 'MANAGE_ACCESS_TOKENS'))) {
    await ctx.authorizer.require(actor as Actor, 'GENERATE_PERSONAL_ACCESS_TOKENS', 'list access tokens');
  }

  const start = request.start ?? 0;
  const count = request.count ?? DEFAULT_TOKEN_PAGE;
  const matching = (await scanTokenRecords(ctx))
    .filter((token) => matchesRecord(token as unknown as Record<string, RecordValue>, resolved))
    .sort(byExpiryDescending);
  const tokens = matching.slice(start, start + count);
  return { start, count: tokens.length, total: matching.length, tokens };
}

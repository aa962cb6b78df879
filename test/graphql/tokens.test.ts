import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, ANA, BOB, codesOf, createAdapter, createHarness, dataOf, type Harness } from './support';

const CREATE = `mutation create($input: CreateAccessTokenInput!) {
  createAccessToken(input: $input) { accessToken metadata { urn id type tokenType name description actorUrn ownerUrn createdAt expiresAt lastUsedAt } }
}`;
const LIST = `query list($input: ListAccessTokenInput!) {
  listAccessTokens(input: $input) { start count total tokens { urn id name actorUrn ownerUrn createdAt expiresAt } }
}`;
const REVOKE = 'mutation revoke($id: String!) { revokeAccessToken(tokenId: $id) }';
const METADATA = 'query meta($token: String!) { getAccessTokenMetadata(token: $token) { id name actorUrn ownerUrn } }';

interface Created {
  createAccessToken: {
    accessToken: string;
    metadata: {
      urn: string;
      id: string;
      type: string;
      tokenType: string;
      name: string;
      actorUrn: string;
      ownerUrn: string;
      createdAt: number;
      expiresAt: number | null;
    };
  };
}

const HOUR = 3_600_000;

describe.each(ADAPTERS)('GraphQL access tokens (%s)', (kind) => {
  let h: Harness;
  let now: number;
  beforeEach(() => {
    now = Date.UTC(2026, 0, 1);
    h = createHarness(createAdapter(kind), { clock: () => now });
  });
  afterEach(() => h.close());

  const create = (actor: string, input: Record<string, unknown>) => h.run(CREATE, { input }, actor);

  it('createAccessToken returns the secret once and the metadata; the token verifies as its actor', async () => {
    const data = dataOf<Created>(
      await create(ANA, { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_HOUR', name: 'ci', description: 'for CI' }),
    );
    const { accessToken, metadata } = data.createAccessToken;
    expect(metadata).toMatchObject({
      type: 'ACCESS_TOKEN',
      tokenType: 'PERSONAL',
      name: 'ci',
      actorUrn: ANA,
      ownerUrn: ANA,
      createdAt: now,
      expiresAt: now + HOUR,
    });
    expect(metadata.urn).toBe(`urn:li:accessToken:${metadata.id}`);
    await expect(h.catalog.tokens.verify(accessToken)).resolves.toMatchObject({ actorUrn: ANA, tokenId: metadata.id });
  });

  it('a manager creates a token acting as another user; a user may not', async () => {
    const data = dataOf<Created>(await create(ADMIN, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_YEAR', name: 'for bob' }));
    expect(data.createAccessToken.metadata).toMatchObject({ actorUrn: BOB, ownerUrn: ADMIN, expiresAt: now + 365 * 24 * HOUR });
    const refused = await create(ANA, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_HOUR', name: 'x' });
    expect(codesOf(refused)).toEqual(['FORBIDDEN']);
    expect(refused.errors?.[0]?.extensions.reason).toBe('MANAGE_ACCESS_TOKENS');
    expect(refused.data).toEqual({ createAccessToken: null });
  });

  it('domain validation errors list every violation with its path', async () => {
    const result = await create(ADMIN, { type: 'PERSONAL', actorUrn: 'not-a-urn', duration: 'NO_EXPIRY', name: '  ' });
    expect(codesOf(result)).toEqual(['INVALID_INPUT']);
    const details = result.errors?.[0]?.extensions.details as Array<{ path: string; message: string }>;
    expect(details.map((d) => d.path).sort()).toEqual(['/actorUrn', '/duration', '/name']);
    for (const d of details) expect(typeof d.message).toBe('string');
  });

  it('listAccessTokens: own tokens with the self filter; all tokens only for a manager', async () => {
    dataOf(await create(ANA, { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_HOUR', name: 'short' }));
    dataOf(await create(ANA, { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_WEEK', name: 'long' }));
    dataOf(await create(BOB, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_DAY', name: 'bobs' }));

    const own = dataOf<{ listAccessTokens: { total: number; count: number; start: number; tokens: Array<{ name: string }> } }>(
      await h.run(LIST, { input: { start: 0, count: 10, filters: [{ field: 'ownerUrn', values: [ANA] }] } }, ANA),
    );
    expect(own.listAccessTokens).toMatchObject({ start: 0, count: 2, total: 2 });
    expect(own.listAccessTokens.tokens.map((t) => t.name)).toEqual(['long', 'short']);

    const byActorValue = dataOf<{ listAccessTokens: { total: number } }>(
      await h.run(LIST, { input: { filters: [{ field: 'actorUrn', value: BOB }] } }, BOB),
    );
    expect(byActorValue.listAccessTokens.total).toBe(1);

    const everyone = await h.run(LIST, { input: { filters: [] } }, ANA);
    expect(codesOf(everyone)).toEqual(['FORBIDDEN']);
    const othersTokens = await h.run(LIST, { input: { filters: [{ field: 'ownerUrn', values: [BOB] }] } }, ANA);
    expect(codesOf(othersTokens)).toEqual(['FORBIDDEN']);

    const all = dataOf<{ listAccessTokens: { total: number } }>(await h.run(LIST, { input: { filters: [] } }, ADMIN));
    expect(all.listAccessTokens.total).toBe(3);
    const page = dataOf<{ listAccessTokens: { start: number; count: number; total: number } }>(
      await h.run(LIST, { input: { start: 1, count: 1 } }, ADMIN),
    );
    expect(page.listAccessTokens).toEqual(expect.objectContaining({ start: 1, count: 1, total: 3 }));
  });

  it('listAccessTokens filters on ServiceAccessTokenInfo fields; an unknown field is INVALID_INPUT with its path', async () => {
    dataOf(await create(ANA, { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_HOUR', name: 'short' }));
    dataOf(await create(ANA, { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_WEEK', name: 'long' }));
    const expiringSoon = dataOf<{ listAccessTokens: { tokens: Array<{ name: string }> } }>(
      await h.run(
        LIST,
        {
          input: {
            filters: [
              { field: 'ownerUrn', values: [ANA] },
              { field: 'expiresAt', values: [String(now + 2 * HOUR)], condition: 'LESS_THAN' },
            ],
          },
        },
        ANA,
      ),
    );
    expect(expiringSoon.listAccessTokens.tokens.map((t) => t.name)).toEqual(['short']);
    const unknown = await h.run(
      LIST,
      {
        input: {
          filters: [
            { field: 'ownerUrn', values: [ANA] },
            { field: 'colour', values: ['red'] },
          ],
        },
      },
      ANA,
    );
    expect(codesOf(unknown)).toEqual(['INVALID_INPUT']);
    expect((unknown.errors?.[0]?.extensions.details as Array<{ path: string }>).map((d) => d.path)).toEqual(['/filters/1/field']);
  });

  it('revokeAccessToken: the owner revokes, the token fails at once; others are refused; unknown ids are NOT_FOUND', async () => {
    const { accessToken, metadata } = dataOf<Created>(
      await create(ANA, { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_DAY', name: 'x' }),
    ).createAccessToken;
    expect(codesOf(await h.run(REVOKE, { id: metadata.id }, BOB))).toEqual(['FORBIDDEN']);
    expect(dataOf(await h.run(REVOKE, { id: metadata.id }, ANA))).toEqual({ revokeAccessToken: true });
    await expect(h.catalog.tokens.verify(accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'revoked' });
    const again = await h.run(REVOKE, { id: metadata.id }, ANA);
    expect(codesOf(again)).toEqual(['NOT_FOUND']);
    expect(again.data).toBeNull();
  });

  it('a manager revokes anyone’s token', async () => {
    const { metadata } = dataOf<Created>(
      await create(BOB, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_DAY', name: 'x' }),
    ).createAccessToken;
    expect(dataOf(await h.run(REVOKE, { id: metadata.id }, ADMIN))).toEqual({ revokeAccessToken: true });
  });

  it('getAccessTokenMetadata: managers only; a token that does not verify is INVALID_INPUT', async () => {
    const { accessToken, metadata } = dataOf<Created>(
      await create(ANA, { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_DAY', name: 'mine' }),
    ).createAccessToken;
    expect(dataOf(await h.run(METADATA, { token: accessToken }, ADMIN))).toEqual({
      getAccessTokenMetadata: { id: metadata.id, name: 'mine', actorUrn: ANA, ownerUrn: ANA },
    });
    expect(codesOf(await h.run(METADATA, { token: accessToken }, ANA))).toEqual(['FORBIDDEN']);
    const bad = await h.run(METADATA, { token: 'not.a.token' }, ADMIN);
    expect(codesOf(bad)).toEqual(['INVALID_INPUT']);
    expect(JSON.stringify(bad)).not.toContain(accessToken);
  });

  it('every token operation without an actor is UNAUTHENTICATED', async () => {
    const results = await Promise.all([
      h.run(CREATE, { input: { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_HOUR', name: 'x' } }, null),
      h.run(LIST, { input: { filters: [] } }, null),
      h.run(REVOKE, { id: 'x' }, null),
      h.run(METADATA, { token: 'x' }, null),
    ]);
    for (const result of results) expect(codesOf(result)).toEqual(['UNAUTHENTICATED']);
    expect((await h.catalog.tokens.list(ADMIN, {})).total).toBe(0);
  });
});

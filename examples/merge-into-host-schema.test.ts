// Runs the merge example: the host's fields and the catalog's operations in one schema.
import { graphql } from 'graphql';
import { createCatalog, type Catalog } from 'metacatalog';
import { createMemoryAdapter } from 'metacatalog/adapters/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHostSchema, type HostContext } from './merge-into-host-schema';

const ADMIN = 'urn:li:corpuser:admin';
const ANA = 'urn:li:corpuser:ana';

describe('merging the catalog into a host schema', () => {
  let catalog: Catalog;
  beforeEach(() => {
    catalog = createCatalog({
      adapter: createMemoryAdapter(),
      tokenSigningKey: 'merge-example-signing-key-0123456789abcdef',
      superUsers: [ADMIN],
      policies: [{ actors: [ANA], privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS'] }],
    });
  });
  afterEach(() => catalog.close());

  const run = (source: string, context: HostContext) => graphql({ schema: createHostSchema(catalog), source, contextValue: context });

  it('answers host fields and catalog operations in one document', async () => {
    await catalog.tokens.create(ANA, { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_DAY', name: 'laptop' });
    const result = await run(
      `{
        requestId
        me { actorUrn privileges tokens { total tokens { name } } }
        listAccessTokens(input: { filters: [{ field: "ownerUrn", values: ["${ANA}"] }] }) { total }
        entity(urn: "urn:li:dataset:(urn:li:dataPlatform:hive,none,PROD)") { urn }
      }`,
      { actorUrn: ANA, requestId: 'r-1' },
    );
    expect(result).toEqual({
      data: {
        requestId: 'r-1',
        me: { actorUrn: ANA, privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS'], tokens: { total: 1, tokens: [{ name: 'laptop' }] } },
        listAccessTokens: { total: 1 },
        entity: null,
      },
    });
  });

  it('catalog mutations keep their rules and error codes in the host schema', async () => {
    const created = await run(
      'mutation { createStructuredProperty(input: { id: "tier", valueType: "string", entityTypes: ["dataset"] }) { urn } }',
      { actorUrn: ADMIN, requestId: 'r-2' },
    );
    expect(created).toEqual({ data: { createStructuredProperty: { urn: 'urn:li:structuredProperty:tier' } } });
    const refused = await run('mutation { deleteStructuredProperty(input: { urn: "urn:li:structuredProperty:tier" }) }', {
      actorUrn: ANA,
      requestId: 'r-3',
    });
    expect(refused.errors?.map((e) => e.extensions.code)).toEqual(['FORBIDDEN']);
    const anonymous = await run('{ requestId listAccessTokens(input: {}) { total } }', { requestId: 'r-4' });
    expect(anonymous.data).toEqual(null);
    expect(anonymous.errors?.map((e) => e.extensions.code)).toEqual(['UNAUTHENTICATED']);
  });
});

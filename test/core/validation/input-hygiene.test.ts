import { describe, expect, it } from 'vitest';
import { freshAdapters } from '../../support/adapters';
import { CatalogError, createCatalog, invalidInput } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const LONE = 'a\ud800b';
const dataset = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const ADAPTERS = freshAdapters();

async function refusal(promise: Promise<unknown>): Promise<CatalogError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CatalogError);
  return error as CatalogError;
}

describe.each(Object.keys(ADAPTERS))('input no store can hold is refused where it enters the domain (%s)', (kind) => {
  it('lone surrogates in a URN, an aspect value, a key, a property value and a token name; Infinity in an aspect; nothing written', async () => {
    const catalog = createCatalog({
      adapter: ADAPTERS[kind as keyof typeof ADAPTERS](),
      superUsers: [ADMIN],
      tokenSigningKey: 'hygiene-test-signing-key-0123456789abcdef',
      jobs: { background: false },
    });
    const urnError = await refusal(catalog.entities.upsertAspect(ADMIN, dataset(LONE), 'datasetProperties', { name: 'x' }));
    expect(urnError.code).toBe('INVALID_INPUT');
    expect(urnError.message).toMatch(/not well-formed Unicode/);

    const valueError = await refusal(
      catalog.entities.upsertAspect(ADMIN, dataset('t'), 'datasetProperties', { name: LONE, customProperties: { [LONE]: 'v' } }),
    );
    expect(valueError.details).toEqual(
      expect.arrayContaining([
        { path: '/aspects/datasetProperties/name', message: 'is not well-formed Unicode (it holds a lone surrogate)' },
        {
          path: `/aspects/datasetProperties/customProperties/${LONE}`,
          message: 'is a key that is not well-formed Unicode (it holds a lone surrogate)',
        },
      ]),
    );
    const profileError = await refusal(
      catalog.timeseries.append(ADMIN, dataset('t'), 'datasetProfile', { timestampMillis: 1, rowCount: Number.POSITIVE_INFINITY }),
    );
    expect(profileError.details).toEqual(
      expect.arrayContaining([{ path: expect.stringMatching(/\/rowCount$/), message: 'must be a finite number, not Infinity' }]),
    );

    await catalog.properties.create(ADMIN, { qualifiedName: 'hygiene.tier', valueType: 'string', entityTypes: ['dataset'] });
    const propertyError = await refusal(
      catalog.properties.upsertValues(ADMIN, dataset('t'), {
        properties: [{ propertyUrn: 'urn:li:structuredProperty:hygiene.tier', values: [{ string: LONE }] }],
      }),
    );
    expect(propertyError.code).toBe('INVALID_INPUT');
    const tokenError = await refusal(catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: LONE }));
    expect(tokenError.code).toBe('INVALID_INPUT');

    expect(await catalog.entities.get(ADMIN, dataset('t'))).toBeUndefined();
    expect((await catalog.timeseries.query(ADMIN, { urn: dataset('t'), aspect: 'datasetProfile' })).results).toEqual([]);
    expect((await catalog.tokens.list(ADMIN, {})).total).toBe(0);
    await catalog.close();
  });
});

describe('refusals of many violations', () => {
  it('keep every violation in details, name ten in the message and list at most 100 in an answer', () => {
    const violations = Array.from({ length: 1000 }, (_, i) => ({ path: `/items/${i}/urn`, message: 'is not a URN' }));
    const error = invalidInput(violations, 'invalid batch');
    expect(error.details).toHaveLength(1000);
    expect(error.message).toMatch(
      /^invalid batch: \/items\/0\/urn: is not a URN; .*\/items\/9\/urn: is not a URN; and 990 more \(every one is in details\)$/,
    );
    expect(error.message.length).toBeLessThan(1000);
    const answer = error.toJSON();
    expect(answer.details).toHaveLength(100);
    expect(answer.omittedDetails).toBe(900);
  });
});

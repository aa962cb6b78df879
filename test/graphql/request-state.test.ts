import { graphql } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory';
import { ADMIN, createHarness } from './support';

/**
 * A request's state (its actor, its entity loader) is kept on the context the host builds for the request,
 * under a symbol of the schema's own and not enumerable: not as a weak map's value, which V8's young-generation
 * collections keep alive (each request's state was promoted). A frozen context still gets its state.
 */
describe('GraphQL request state', () => {
  const query = '{ a: entity(urn: "urn:li:corpuser:nobody") { urn } b: entity(urn: "urn:li:corpuser:nobody2") { urn } }';

  it('sits on the context without showing in its keys, and a frozen context still works', async () => {
    const harness = createHarness(createMemoryAdapter());
    try {
      const context = { actorUrn: ADMIN };
      const first = await graphql({ schema: harness.schema, source: query, contextValue: context });
      expect(first.errors).toBeUndefined();
      expect(first.data).toEqual({ a: null, b: null });
      expect(Object.keys(context)).toEqual(['actorUrn']);
      expect(JSON.stringify(context)).toBe(JSON.stringify({ actorUrn: ADMIN }));
      const symbols = Object.getOwnPropertySymbols(context);
      expect(symbols).toHaveLength(1);
      expect(Object.getOwnPropertyDescriptor(context, symbols[0]!)?.enumerable).toBe(false);

      // The same context again: the same state (one property, not one per request).
      await graphql({ schema: harness.schema, source: query, contextValue: context });
      expect(Object.getOwnPropertySymbols(context)).toHaveLength(1);

      const frozen = Object.freeze({ actorUrn: ADMIN });
      const answer = await graphql({ schema: harness.schema, source: query, contextValue: frozen });
      expect(answer.errors).toBeUndefined();
      expect(answer.data).toEqual({ a: null, b: null });
    } finally {
      await harness.close();
    }
  });

  it('answers UNAUTHENTICATED for a context without an actor, frozen or not', async () => {
    const harness = createHarness(createMemoryAdapter());
    try {
      for (const context of [{}, Object.freeze({})]) {
        const answer = await graphql({ schema: harness.schema, source: query, contextValue: context });
        expect(answer.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      }
    } finally {
      await harness.close();
    }
  });
});

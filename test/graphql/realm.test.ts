import { GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { requireOneGraphQL } from '../../src/graphql/schema';

describe('two copies of graphql', () => {
  it('a schema built by another copy is refused at once, with an error that names the fix', () => {
    // What a second copy's class looks like to this one: same name, another identity.
    class OtherRealmSchema {}
    const error = (() => {
      try {
        requireOneGraphQL(new OtherRealmSchema());
        return undefined;
      } catch (e) {
        return e as Error & { code?: string };
      }
    })();
    expect(error?.code).toBe('UNSUPPORTED');
    expect(error?.message).toMatch(/two copies of the graphql package/);
    expect(error?.message).toMatch(/alias graphql to its CommonJS entry in vitest\.config/);
  });

  it('a schema of this copy passes', () => {
    expect(() => requireOneGraphQL(new GraphQLSchema({}))).not.toThrow();
  });
});

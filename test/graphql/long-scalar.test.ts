import { graphql, GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { describe, expect, it } from 'vitest';
import { LongScalar } from '../../src/graphql/long-scalar';

// A small schema around the scalar: echo(value: Long): Long.
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      echo: { type: LongScalar, args: { value: { type: LongScalar } }, resolve: (_p, args: { value: unknown }) => args.value },
      raw: {
        type: LongScalar,
        args: { text: { type: GraphQLString } },
        resolve: (_p, args: { text: string }) => JSON.parse(args.text) as unknown,
      },
    },
  }),
});

describe('Long scalar', () => {
  it('takes integers beyond 32 bits as literals, numbers and decimal strings', async () => {
    const big = 1_795_361_237_923;
    expect((await graphql({ schema, source: `{ echo(value: ${big}) }` })).data).toEqual({ echo: big });
    expect((await graphql({ schema, source: `{ echo(value: "${big}") }` })).data).toEqual({ echo: big });
    expect((await graphql({ schema, source: 'query q($v: Long) { echo(value: $v) }', variableValues: { v: big } })).data).toEqual({
      echo: big,
    });
    expect((await graphql({ schema, source: 'query q($v: Long) { echo(value: $v) }', variableValues: { v: String(big) } })).data).toEqual({
      echo: big,
    });
  });

  it('refuses fractions, unsafe integers and other kinds', async () => {
    for (const literal of ['1.5', '"1e3"', 'true', String(2 ** 53)]) {
      const result = await graphql({ schema, source: `{ echo(value: ${literal}) }` });
      expect(result.errors?.length, literal).toBe(1);
    }
    const variable = await graphql({ schema, source: 'query q($v: Long) { echo(value: $v) }', variableValues: { v: 'soon' } });
    expect(variable.errors?.length).toBe(1);
  });

  it('serializes integers and refuses anything else on output', async () => {
    expect((await graphql({ schema, source: '{ raw(text: "42") }' })).data).toEqual({ raw: 42 });
    const result = await graphql({ schema, source: '{ raw(text: "4.2") }' });
    expect(result.errors?.length).toBe(1);
    expect(result.data).toEqual({ raw: null });
  });
});

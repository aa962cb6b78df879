import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

const DIGITS = /^-?\d+$/;

function toLong(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && DIGITS.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

function refuse(value: unknown): never {
  throw new GraphQLError(
    `Long must be an integer of at most 2^53 - 1 (a number or a decimal string), got ${JSON.stringify(value) ?? String(value)}`,
  );
}

/** `Long`: epoch milliseconds and counts; a JSON number on output, a number or a decimal string on input. */
export const LongScalar = new GraphQLScalarType<number, number>({
  name: 'Long',
  description: 'Milliseconds since the Unix epoch, or a count: an integer of at most 2^53 - 1. Accepted as a number or a decimal string.',
  serialize(value) {
    return toLong(value) ?? refuse(value);
  },
  parseValue(value) {
    return toLong(value) ?? refuse(value);
  },
  parseLiteral(node: ValueNode) {
    if (node.kind === Kind.INT || node.kind === Kind.STRING) return toLong(node.value) ?? refuse(node.value);
    return refuse(node.kind);
  },
});

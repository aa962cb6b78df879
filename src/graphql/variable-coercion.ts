import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  isListType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';

/**
 * The platform's own clients send numbers and booleans as strings in GraphQL variables (`"start": "0"`,
 * `"count": "20"`, `"hard": "false"`); graphql-java accepts them, graphql-js refuses. This turns, in the
 * variables only (never in literals of the document), a numeric string given for an `Int` or `Float` and
 * `"true"` / `"false"` given for a `Boolean` into the number or boolean, inside lists and input objects
 * too. Anything else is left for graphql-js to check as usual. Returns new variables; the input is not
 * changed.
 */
export function coerceStringVariables(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  operationName?: string | null,
): Record<string, unknown> | undefined {
  if (!variables) return undefined;
  const operation = document.definitions.find(
    (d) => d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName),
  );
  if (!operation || operation.kind !== Kind.OPERATION_DEFINITION) return { ...variables };
  const out: Record<string, unknown> = { ...variables };
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (type && name in out) out[name] = coerce(out[name], type, 0);
  }
  return out;
}

const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

function coerce(value: unknown, type: GraphQLInputType, depth: number): unknown {
  if (value === null || value === undefined || depth > 32) return value;
  const nullable = getNullableType(type);
  if (isListType(nullable))
    return Array.isArray(value) ? value.map((item) => coerce(item, nullable.ofType, depth + 1)) : coerce(value, nullable.ofType, depth + 1);
  if (isInputObjectType(nullable)) {
    if (typeof value !== 'object' || Array.isArray(value)) return value;
    const fields = nullable.getFields();
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const [key, field] of Object.entries(fields)) if (key in out) out[key] = coerce(out[key], field.type, depth + 1);
    return out;
  }
  if (typeof value !== 'string') return value;
  switch (getNamedType(nullable).name) {
    case 'Int':
      return /^-?(0|[1-9][0-9]*)$/.test(value) ? Number(value) : value;
    case 'Float':
      return NUMBER.test(value) ? Number(value) : value;
    case 'Boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    default:
      return value;
  }
}

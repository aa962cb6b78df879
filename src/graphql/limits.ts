import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  valueFromASTUntyped,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/**
 * Limits on what one GraphQL document may ask, checked before anything runs. The data holds cycles
 * (a user → its structured properties → a property → its definition's creator → the user), so without
 * them a small document can ask for an exponential amount of work.
 */
export interface QueryLimits {
  /** Deepest field nesting, fragments expanded. Default 15. */
  maxDepth?: number;
  /**
   * Budget of one operation: every field costs 1, and the fields under a list are counted once per item
   * the list may hold (its `count`, `first` or `limit` argument, or `input.count`; for a list directly
   * inside a page object given such a size, e.g. `searchResults` of `scrollAcrossEntities(input: { count })`,
   * that size; `defaultListSize` otherwise). Aliases count as the fields they are. Default 50,000.
   */
  maxCost?: number;
  /** Items assumed for a list field whose size no argument gives. Default 10. */
  defaultListSize?: number;
}

export const DEFAULT_QUERY_LIMITS: Required<QueryLimits> = Object.freeze({ maxDepth: 15, maxCost: 50_000, defaultListSize: 10 });

/** The size arguments a list or page field may take, directly or inside its `input`. */
const SIZE_ARGUMENTS = ['count', 'first', 'limit'] as const;

interface CostWalk {
  schema: GraphQLSchema;
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  variables: Readonly<Record<string, unknown>>;
  limits: Required<QueryLimits>;
  /** Fragment costs, once per fragment and page size handed to it (nothing else about the spread matters). */
  fragmentCost: Map<string, number>;
  /** Fragments being expanded (a cycle is invalid anyway; it must not loop here). */
  expanding: Set<string>;
}

function resolveLimits(limits: QueryLimits = {}): Required<QueryLimits> {
  return { ...DEFAULT_QUERY_LIMITS, ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) };
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const out = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) out.set(definition.name.value, definition);
  return out;
}

/** Depth of a selection set with fragments expanded; stops counting past `limit`. */
function depthOf(
  selectionSet: SelectionSetNode | undefined,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  limit: number,
  expanding: Set<string>,
): number {
  if (!selectionSet) return 0;
  let deepest = 0;
  for (const selection of selectionSet.selections) {
    let depth: number;
    if (selection.kind === Kind.FIELD) {
      depth = selection.selectionSet ? 1 + depthOf(selection.selectionSet, fragments, limit - 1, expanding) : 1;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      depth = depthOf(selection.selectionSet, fragments, limit, expanding);
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment || expanding.has(name)) continue;
      expanding.add(name);
      depth = depthOf(fragment.selectionSet, fragments, limit, expanding);
      expanding.delete(name);
    }
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
  }
  return deepest;
}

function argumentValue(node: FieldNode, name: string, variables: Readonly<Record<string, unknown>>): unknown {
  const argument = node.arguments?.find((a) => a.name.value === name);
  return argument ? valueFromASTUntyped(argument.value, variables) : undefined;
}

/**
 * How many times the field's selection is counted, and the page size it hands to the lists directly
 * inside it. A list counts its size argument, else the size its page object handed down, else
 * `defaultListSize`. An object with a size argument (a page: `scrollAcrossEntities(input: { count })`)
 * counts once and hands that size to its lists (`searchResults`), so a page is not counted twice.
 */
function itemsOf(
  node: FieldNode,
  field: GraphQLField<unknown, unknown> | undefined,
  walk: CostWalk,
  handed: number | undefined,
): { items: number; hand?: number } {
  const input = argumentValue(node, 'input', walk.variables);
  const isList = field ? isListType(getNullableType(field.type)) : false;
  for (const name of SIZE_ARGUMENTS) {
    const direct = argumentValue(node, name, walk.variables);
    const nested = input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[name] : undefined;
    const size = typeof direct === 'number' ? direct : typeof nested === 'number' ? nested : undefined;
    if (size === undefined) continue;
    // An unknown field (an invalid document) is counted as a list: never cheaper than it may be.
    return field && !isList ? { items: 1, hand: Math.max(1, size) } : { items: Math.max(1, size) };
  }
  return isList ? { items: handed ?? walk.limits.defaultListSize } : { items: 1 };
}

function fieldOf(parent: GraphQLCompositeType | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
  return parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
}

/** `handed`: the page size the enclosing page object hands to the lists of this selection. */
function selectionCost(selectionSet: SelectionSetNode, parent: GraphQLCompositeType | undefined, walk: CostWalk, handed?: number): number {
  let cost = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const field = fieldOf(parent, selection.name.value);
      cost += 1;
      if (selection.selectionSet) {
        const type = field ? getNamedType(field.type) : undefined;
        const childType = type && isCompositeType(type) ? type : undefined;
        const { items, hand } = itemsOf(selection, field, walk, handed);
        cost += items * selectionCost(selection.selectionSet, childType, walk, hand);
      }
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : parent;
      cost += selectionCost(selection.selectionSet, condition && isCompositeType(condition) ? condition : parent, walk, handed);
    } else {
      const name = selection.name.value;
      // A fragment's cost depends only on the page size handed to it: computed once per size.
      const key = `${name}\u0000${handed ?? ''}`;
      let known = walk.fragmentCost.get(key);
      if (known === undefined) {
        const fragment = walk.fragments.get(name);
        if (!fragment || walk.expanding.has(name)) continue;
        walk.expanding.add(name);
        const condition = walk.schema.getType(fragment.typeCondition.name.value);
        known = selectionCost(fragment.selectionSet, condition && isCompositeType(condition) ? condition : undefined, walk, handed);
        walk.expanding.delete(name);
        walk.fragmentCost.set(key, known);
      }
      cost += known;
    }
    // Past the budget the exact figure no longer matters (and must not overflow).
    if (cost > walk.limits.maxCost) return Number.POSITIVE_INFINITY;
  }
  return cost;
}

function rootTypeOf(schema: GraphQLSchema, operation: OperationDefinitionNode): GraphQLCompositeType | undefined {
  const type =
    operation.operation === 'query'
      ? schema.getQueryType()
      : operation.operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  return type ?? undefined;
}

function limitError(message: string, node?: OperationDefinitionNode): GraphQLError {
  return new GraphQLError(message, { ...(node ? { nodes: [node] } : {}), extensions: { code: 'INVALID_INPUT' } });
}

function depthProblem(
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  limits: Required<QueryLimits>,
): GraphQLError | undefined {
  const depth = depthOf(operation.selectionSet, fragments, limits.maxDepth, new Set());
  return depth > limits.maxDepth
    ? limitError(`the document nests fields more than ${limits.maxDepth} deep (fragments expanded); ask for less at a time`, operation)
    : undefined;
}

function costProblem(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Readonly<Record<string, unknown>>,
  limits: Required<QueryLimits>,
): GraphQLError | undefined {
  const walk: CostWalk = { schema, fragments, variables, limits, fragmentCost: new Map(), expanding: new Set() };
  const cost = selectionCost(operation.selectionSet, rootTypeOf(schema, operation), walk);
  return cost > limits.maxCost
    ? limitError(
        `the document asks for more than the cost budget of ${limits.maxCost} (every field counts once per item of the lists above it, aliases included); ask for fewer results or fields`,
        operation,
      )
    : undefined;
}

/**
 * Checks one request against the limits (depth, and cost with the request's variables); throws a
 * GraphQLError with `extensions.code` INVALID_INPUT naming the limit. For servers that give a hook
 * before execution (graphql-yoga's `onExecute`, Apollo Server's `didResolveOperation`): docs/graphql.md.
 */
export function checkQueryLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  request: { variables?: Readonly<Record<string, unknown>> | null; operationName?: string | null } & QueryLimits = {},
): void {
  const limits = resolveLimits(request);
  const fragments = fragmentsOf(document);
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    if (request.operationName && definition.name?.value !== request.operationName) continue;
    const problem =
      depthProblem(definition, fragments, limits) ?? costProblem(schema, definition, fragments, request.variables ?? {}, limits);
    if (problem) throw problem;
  }
}

/**
 * The limits as validation rules, for servers that take `validationRules` (one line in graphql-yoga,
 * Apollo Server, graphql-http...). Validation sees no variables: a list size given by a variable counts
 * as `defaultListSize`, so pair these with `checkQueryLimits` where the server gives the variables.
 */
export function createQueryLimitRules(limits: QueryLimits = {}): ValidationRule[] {
  const resolved = resolveLimits(limits);
  const depthRule: ValidationRule = (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(node) {
      const problem = depthProblem(node, fragmentsOf(context.getDocument()), resolved);
      if (problem) context.reportError(problem);
    },
  });
  const costRule: ValidationRule = (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(node) {
      const problem = costProblem(context.getSchema(), node, fragmentsOf(context.getDocument()), {}, resolved);
      if (problem) context.reportError(problem);
    },
  });
  return [depthRule, costRule];
}

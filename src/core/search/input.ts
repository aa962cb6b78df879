import type { EntityTypeName, GraphQLEntityTypeName } from '../entities/aspect-types';
import type { Actor } from '../access/actor';
import type { FilterOperator, SearchCondition, SearchField, SearchFilter, SearchScope } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { isCatalogError, type Violation } from '../../errors';
import { normalizeFacetFilter, type FacetCondition, type FacetFilterInput } from './filters';
import { REMOVED_FIELD } from '../entities/search-document';
import type { FilterFieldSource, ResolvedPropertyField, ValueTypeName } from '../properties/types';

export type { FilterFieldSource };

/** `searchFlags` of the three operations; other flags of the established platform are accepted and ignored. */
export interface SearchFlags {
  /** Include soft-deleted entities (`status.removed`); default false. */
  includeSoftDeleted?: boolean | null;
  /** Aggregation only: at most this many values per facet; default 20. */
  maxAggValues?: number | null;
}

/** The part of the input the three operations share (GraphQL shapes of docs/graphql.md). */
export interface SearchScopeInput {
  /** GraphQL `EntityType` names (`DATASET`); entity names (`dataset`) are accepted too. Empty or absent: every type. */
  types?: readonly (GraphQLEntityTypeName | EntityTypeName)[] | null;
  /** Full text over name, description and URN key; `*`, empty or absent: everything. */
  query?: string | null;
  /** OR of ANDs. */
  orFilters?: ReadonlyArray<{ and?: readonly FacetFilterInput[] | null }> | null;
  /** Deprecated form of one AND group; ANDed into every `orFilters` group when both are given. */
  filters?: readonly FacetFilterInput[] | null;
  searchFlags?: SearchFlags | null;
}

/** A filter or facet field name resolved for the adapter, with what the domain needs to present it. */
export interface ResolvedSearchField {
  /** As the client wrote it, e.g. `structuredProperties.io.acryl.retention`. */
  name: string;
  field: SearchField;
  /** `entityType` for `_entityType`, the value type for a property, `boolean` for a true/false field, `string` otherwise. */
  valueType: ValueTypeName | 'entityType' | 'boolean';
}

export const PROPERTY_FIELD_PREFIX = 'structuredProperties.';
export const ENTITY_TYPE_FIELD = '_entityType';
const URN_FIELD = 'urn';
/** The exact-match spelling of a field in the established platform (`platform.keyword`): the same field here. */
const KEYWORD_SUFFIX = '.keyword';
const BOOLEAN_OPERATORS: ReadonlySet<FilterOperator> = new Set(['EQUAL', 'IN', 'IEQUAL', 'EXISTS']);
/** A condition every document satisfies (every document has a URN); negated, none does. */
const EVERY_DOCUMENT: SearchCondition = { field: { kind: 'urn' }, operator: 'EXISTS', values: [], negated: false };

const STRING_ONLY: ReadonlySet<FilterOperator> = new Set(['CONTAIN', 'START_WITH', 'END_WITH', 'IEQUAL']);
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.getUTCFullYear() === Number(m[1]) && date.getUTCMonth() === Number(m[2]) - 1 && date.getUTCDate() === Number(m[3]);
}

/** Turns the GraphQL inputs into the adapter's typed scope; collects every problem before throwing. */
export class SearchInputResolver {
  constructor(
    private readonly ctx: CatalogContext,
    private readonly filterFields: FilterFieldSource,
  ) {}

  /** Names of the standard fields: `removed` and those the registry declares, over all entity types. */
  standardFields(): string[] {
    return [...this.standardFieldKinds().keys()].sort();
  }

  /** Standard field name → whether it is a true/false field (one that any type declares boolean is). */
  private standardFieldKinds(): Map<string, boolean> {
    const kinds = new Map<string, boolean>([[REMOVED_FIELD, true]]);
    for (const type of this.ctx.registry.entityTypeNames()) {
      for (const f of this.ctx.registry.entityType(type).searchFields ?? [])
        kinds.set(f.name, kinds.get(f.name) === true || f.boolean === true);
    }
    return kinds;
  }

  /** An entity type given as a GraphQL name, an entity name or an entity-type URN; undefined when unknown. */
  entityName(input: string): string | undefined {
    return this.ctx.registry.entityNameFromGraphqlType(input) ?? this.ctx.registry.entityNameFromInput(input);
  }

  graphqlType(entityName: string): string {
    return this.ctx.registry.hasEntityType(entityName) ? this.ctx.registry.graphqlTypeOf(entityName) : entityName.toUpperCase();
  }

  /** Resolves a filter or facet field name; a refusal is reported at `path`. */
  async field(actor: Actor, name: string, path: string, violations: Violation[]): Promise<ResolvedSearchField | undefined> {
    const resolved = await this.lookup(actor, name);
    if (typeof resolved === 'string') {
      violations.push({ path, message: resolved });
      return undefined;
    }
    return resolved;
  }

  /** A field name resolved, or why it is refused. */
  private async lookup(actor: Actor, name: string): Promise<ResolvedSearchField | string> {
    return this.standardField(name) ?? (await this.propertyField(actor, name));
  }

  /** `_entityType`, `urn`, a registered standard field, or a message; undefined for a structured property. */
  private standardField(name: string): ResolvedSearchField | string | undefined {
    if (name === ENTITY_TYPE_FIELD) return { name, field: { kind: 'entityType' }, valueType: 'entityType' };
    if (name === URN_FIELD) return { name, field: { kind: 'urn' }, valueType: 'urn' };
    if (name.startsWith(PROPERTY_FIELD_PREFIX)) {
      return name.length === PROPERTY_FIELD_PREFIX.length
        ? `"${name}" names no structured property: use structuredProperties.<qualifiedName>`
        : undefined;
    }
    const kinds = this.standardFieldKinds();
    const base = name.endsWith(KEYWORD_SUFFIX) ? name.slice(0, -KEYWORD_SUFFIX.length) : name;
    const boolean = kinds.get(base);
    if (boolean !== undefined) return { name, field: { kind: 'field', name: base }, valueType: boolean ? 'boolean' : 'string' };
    if (base === URN_FIELD) return { name, field: { kind: 'urn' }, valueType: 'urn' };
    const standard = [...kinds.keys()].sort();
    return `unknown field "${name}"; use structuredProperties.<qualifiedName>, ${ENTITY_TYPE_FIELD}, ${URN_FIELD} or one of: ${standard.join(', ')}`;
  }

  /** A `structuredProperties.<qualifiedName>` field, or the refusal (soft-deleted, malformed) as a message. */
  private async propertyField(actor: Actor, name: string): Promise<ResolvedSearchField | string> {
    try {
      return propertySearchField(name, await this.filterFields.resolve(actor, name.slice(PROPERTY_FIELD_PREFIX.length)));
    } catch (error) {
      // Soft-deleted properties and malformed names: the property service's refusal, at the caller's path.
      if (!isCatalogError(error) || error.code !== 'INVALID_INPUT') throw error;
      return error.details[0]?.message ?? error.message;
    }
  }

  /** Types the string values of one condition for its field. */
  private typedValues(
    resolved: ResolvedSearchField,
    operator: FilterOperator,
    values: readonly string[],
    path: string,
    violations: Violation[],
  ): Array<string | number> {
    if (operator === 'EXISTS') return [];
    const { valueType, name } = resolved;
    if (valueType === 'number') {
      if (STRING_ONLY.has(operator)) {
        violations.push({ path: `${path}/condition`, message: `${operator} does not apply to the number property "${name}"` });
        return [];
      }
      return values.map((text, k) => {
        const n = text.trim() === '' ? Number.NaN : Number(text);
        if (!Number.isFinite(n))
          violations.push({ path: `${path}/values/${k}`, message: `"${text}" is not a number ("${name}" holds numbers)` });
        return n === 0 ? 0 : n;
      });
    }
    if (valueType === 'date' && !STRING_ONLY.has(operator)) {
      values.forEach((text, k) => {
        if (!isDate(text))
          violations.push({
            path: `${path}/values/${k}`,
            message: `"${text}" is not a date in the form YYYY-MM-DD ("${name}" holds dates)`,
          });
      });
    }
    if (valueType === 'entityType' && (operator === 'EQUAL' || operator === 'IN' || operator === 'IEQUAL')) {
      return values.map((text, k) => {
        const entity = this.entityName(text) ?? this.entityName(text.toUpperCase());
        if (entity === undefined)
          violations.push({ path: `${path}/values/${k}`, message: `unknown entity type "${text}"; known: ${this.knownTypes()}` });
        return entity ?? text;
      });
    }
    return [...values];
  }

  private knownTypes(): string {
    return this.ctx.registry
      .entityTypeNames()
      .map((n) => this.ctx.registry.graphqlTypeOf(n))
      .join(', ');
  }

  /** The shared scope: entity types, text, OR of ANDs, soft-deleted flag. Violations are collected, not thrown. */
  async scope(actor: Actor, input: SearchScopeInput, violations: Violation[]): Promise<SearchScope> {
    const prepared = this.prepare(input, violations);
    // Each distinct field resolved once (the only waits), then the conditions built.
    const fields = new Map<string, ResolvedSearchField | string>();
    for (const name of prepared.names) fields.set(name, await this.lookup(actor, name));
    return this.build(prepared, fields, violations);
  }

  /**
   * The scope resolved from cached definitions alone, synchronously, with the change token they were
   * cached under (undefined when it names no structured property); undefined when a property is not
   * cached or anything is refused (`scope` then resolves it in full and says why). The caller checks
   * the token against the state it reads.
   */
  cachedScope(input: SearchScopeInput): { scope: SearchScope; token: string | undefined } | undefined {
    const token = this.filterFields.cachedToken();
    let definitionsUsed = false;
    const violations: Violation[] = [];
    const prepared = this.prepare(input, violations);
    const fields = new Map<string, ResolvedSearchField | string>();
    for (const name of prepared.names) {
      let resolved = this.standardField(name);
      if (resolved === undefined) {
        const field = token === undefined ? undefined : this.filterFields.cached(name.slice(PROPERTY_FIELD_PREFIX.length));
        if (field === undefined) return undefined;
        resolved = propertySearchField(name, field);
        definitionsUsed = true;
      }
      fields.set(name, resolved);
    }
    const scope = this.build(prepared, fields, violations);
    // Without structured properties the scope depends on no stored state: nothing to check.
    return violations.length === 0 ? { scope, token: definitionsUsed ? token : undefined } : undefined;
  }

  /** Entity types checked, every condition normalized with its path, and the field names to resolve. */
  private prepare(input: SearchScopeInput, violations: Violation[]): PreparedScope {
    const entityTypes: string[] = [];
    const types = input.types ?? [];
    for (let i = 0; i < types.length; i++) {
      const type = types[i]!;
      const name = this.entityName(type);
      if (name === undefined)
        violations.push({ path: `/types/${i}`, message: `unknown entity type "${type}"; known: ${this.knownTypes()}` });
      else if (!entityTypes.includes(name)) entityTypes.push(name);
    }
    const names = new Set<string>();
    const normalized = (filters: readonly FacetFilterInput[], path: string): PreparedCondition[] => {
      const out: PreparedCondition[] = [];
      for (let i = 0; i < filters.length; i++) {
        const condition = normalizeFacetFilter(filters[i]!);
        // A condition without values is refused on its own; its field is not resolved.
        if (condition.operator === 'EXISTS' || condition.values.length > 0) names.add(condition.field);
        out.push({ condition, path: `${path}/${i}` });
      }
      return out;
    };
    const extra = normalized(input.filters ?? [], '/filters');
    const orFilters = input.orFilters ?? [];
    const groups: PreparedCondition[][] = [];
    for (let g = 0; g < orFilters.length; g++) groups.push(normalized(orFilters[g]!.and ?? [], `/orFilters/${g}/and`));
    const query = (input.query ?? '').trim();
    return { entityTypes, query, extra, groups, names, includeRemoved: input.searchFlags?.includeSoftDeleted === true };
  }

  /** The conditions built with their fields resolved; refusals reported in input order. */
  private build(prepared: PreparedScope, fields: ReadonlyMap<string, ResolvedSearchField | string>, violations: Violation[]): SearchScope {
    // A filter that names `removed` decides about soft-deleted entities itself (as in the established platform).
    let namesRemoved = false;
    const conditionsOf = (list: readonly PreparedCondition[]): SearchCondition[] => {
      const out: SearchCondition[] = [];
      for (const { condition, path } of list) {
        if (condition.operator !== 'EXISTS' && condition.values.length === 0) {
          violations.push({ path, message: `condition ${condition.operator} needs a value or values` });
          continue;
        }
        const resolved = fields.get(condition.field)!;
        if (typeof resolved === 'string') {
          violations.push({ path: `${path}/field`, message: resolved });
          continue;
        }
        if (resolved.field.kind === 'field' && resolved.field.name === REMOVED_FIELD) namesRemoved = true;
        if (resolved.valueType === 'boolean') {
          const built = booleanCondition(resolved, condition, path, violations);
          if (built) out.push(built);
          continue;
        }
        const values = this.typedValues(resolved, condition.operator, condition.values, path, violations);
        out.push({ field: resolved.field, operator: condition.operator, values, negated: condition.negated });
      }
      return out;
    };
    const filter: SearchFilter = [];
    const extraBuilt = conditionsOf(prepared.extra);
    if (prepared.groups.length === 0) {
      if (prepared.extra.length) filter.push(extraBuilt);
    } else {
      for (const own of prepared.groups) filter.push([...conditionsOf(own), ...extraBuilt]);
    }
    const { query } = prepared;
    const scope: SearchScope = { entityTypes: prepared.entityTypes, filter, includeRemoved: prepared.includeRemoved || namesRemoved };
    if (query !== '' && query !== '*') scope.text = query;
    return scope;
  }
}

interface PreparedCondition {
  condition: FacetCondition;
  path: string;
}

interface PreparedScope {
  entityTypes: string[];
  query: string;
  /** The deprecated `filters`, ANDed into every group. */
  extra: PreparedCondition[];
  groups: PreparedCondition[][];
  /** Field names of the conditions that need resolving, in input order. */
  names: Set<string>;
  includeRemoved: boolean;
}

/**
 * A condition on a true/false field, whose documents hold `true` or nothing (false). EQUAL, IN and
 * IEQUAL take `true` and `false` (any case); `false` is "not true". EXISTS holds for every document
 * (a true/false field always has a value). Other operators are refused.
 */
function booleanCondition(
  resolved: ResolvedSearchField,
  condition: FacetCondition,
  path: string,
  violations: Violation[],
): SearchCondition | undefined {
  const { operator, negated } = condition;
  if (!BOOLEAN_OPERATORS.has(operator)) {
    violations.push({
      path: `${path}/condition`,
      message: `${operator} does not apply to the true/false field "${resolved.name}"; use EQUAL, IN or EXISTS`,
    });
    return undefined;
  }
  if (operator === 'EXISTS') return { ...EVERY_DOCUMENT, negated };
  let wantTrue = false;
  let wantFalse = false;
  condition.values.forEach((text, k) => {
    const value = text.trim().toLowerCase();
    if (value === 'true') wantTrue = true;
    else if (value === 'false') wantFalse = true;
    else
      violations.push({
        path: `${path}/values/${k}`,
        message: `"${text}" is not true or false ("${resolved.name}" is a true/false field)`,
      });
  });
  if (wantTrue && wantFalse) return { ...EVERY_DOCUMENT, negated };
  if (!wantTrue && !wantFalse) return undefined;
  return { field: resolved.field, operator: 'EQUAL', values: ['true'], negated: wantTrue ? negated : !negated };
}

function propertySearchField(name: string, resolved: ResolvedPropertyField): ResolvedSearchField {
  const { propertyUrn, definitionKey, valueKind } = resolved;
  return { name, field: { kind: 'property', propertyUrn, definitionKey, valueKind }, valueType: resolved.valueType };
}

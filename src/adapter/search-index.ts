/**
 * Part of the adapter contract: the search index. It answers typed questions over the search
 * documents the domain derived; it never derives one itself. Documents arrive through the entity
 * store's commit (`EntityWrite.searchDocument`), so the index never disagrees with the stored aspects.
 *
 * - Not found: a search that matches nothing answers `total: 0` and no hits. Never an error.
 * - Atomic: every answer is read from one committed state (a commit is wholly visible or not at all).
 * - Order: as each member says; URNs and strings compare by code units.
 */

/** The values of one structured property on one entity, typed, with the definition they were written under. */
export interface SearchDocumentProperty {
  propertyUrn: string;
  /**
   * Identifies the definition incarnation and version the values were written under. A query only
   * matches values whose key equals the key it is given, which is what makes values of a
   * superseded version or of a hard-deleted (and maybe re-created) definition invisible at once.
   */
  definitionKey: string;
  values: Array<string | number>;
}

export interface SearchDocument {
  urn: string;
  entityType: string;
  /** `status.removed`: soft-deleted entities are left out of results unless asked for. */
  removed: boolean;
  /** Full-text fields. `urnKey` is the key part of the URN. */
  text: { name?: string; description?: string; urnKey: string };
  /** Standard searchable fields (e.g. `platform`, `name`), each a list of strings. */
  fields: Record<string, string[]>;
  properties: SearchDocumentProperty[];
}

export const FILTER_OPERATORS = [
  'EQUAL',
  'IEQUAL',
  'IN',
  'CONTAIN',
  'START_WITH',
  'END_WITH',
  'EXISTS',
  'GREATER_THAN',
  'GREATER_THAN_OR_EQUAL_TO',
  'LESS_THAN',
  'LESS_THAN_OR_EQUAL_TO',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** What a condition looks at, already resolved by the domain. */
export type SearchField =
  | { kind: 'entityType' }
  | { kind: 'urn' }
  /** A standard field of the search document's `fields`; always strings. */
  | { kind: 'field'; name: string }
  /** A structured property; only values whose `definitionKey` equals this one count. */
  | { kind: 'property'; propertyUrn: string; definitionKey: string; valueKind: 'string' | 'number' };

/**
 * One condition. `values` are typed already (numbers for a number property). Several values mean
 * "any of". EXISTS has no values; any other operator with no values matches nothing. `negated`
 * inverts the whole condition (a document without the field matches a negated EQUAL).
 *
 * Values compare by type: a number never equals a string. EQUAL and IN are equality; IEQUAL is
 * equality after `toLowerCase()` (Unicode, like JavaScript). CONTAIN, START_WITH and END_WITH are
 * case-sensitive substring tests on strings and never match a number. The four range operators
 * compare numbers numerically and strings by code units (so `YYYY-MM-DD` dates compare as dates);
 * a number never satisfies a bound given as a string, nor the reverse.
 */
export interface SearchCondition {
  field: SearchField;
  operator: FilterOperator;
  values: Array<string | number>;
  negated: boolean;
}

/** OR of ANDs. An empty outer list means "no filter"; an empty inner list matches everything. */
export type SearchFilter = SearchCondition[][];

export interface SearchScope {
  /** Empty means every entity type. */
  entityTypes: string[];
  /**
   * Full-text query over name, description and URN key (never structured-property values); undefined
   * means all (the domain maps `*` and '' to undefined). Analysed by src/adapter/text-analysis.ts,
   * which every adapter applies to the documents' text and to this query alike: tokens of letters
   * and digits, lower-cased and accent-folded; English stop words dropped; Porter-stemmed. A document
   * matches when it contains every query term (a term ending in `*` is a prefix of a term, unstemmed).
   * A query whose terms are all stop words or punctuation matches nothing.
   */
  text?: string;
  filter: SearchFilter;
  /** Include entities whose search document has `removed: true`. */
  includeRemoved: boolean;
}

export interface SearchRequest extends SearchScope {
  /**
   * `urn`: ascending URN, with `afterUrn` as a keyset cursor (stable scrolling while writes happen).
   * `relevance`: full-text score descending, then URN ascending; with no text it is the same as `urn`.
   * Scores are the adapter's own (BM25 family: a match in the name weighs more than one in the
   * description); which documents match is fixed by the contract, their exact ranking is not.
   */
  order: 'urn' | 'relevance';
  /** Keyset cursor for `order: 'urn'` (ignored otherwise): only URNs greater than this one, existing or not. */
  afterUrn?: string;
  /** Results to skip, after `afterUrn`; either order. Default 0. */
  offset?: number;
  limit: number;
}

export interface SearchHit {
  urn: string;
  entityType: string;
  /** Full-text score (higher is better), in `relevance` order with a text query. */
  score?: number;
}

export interface SearchResponse {
  /** Number of documents that match the scope (not only this page). */
  total: number;
  hits: SearchHit[];
  /**
   * Set by adapters declaring `capabilities.changeToken`: the change token of the state this answer was read from. The
   * domain then checks the definitions it cached against it instead of asking for the token before
   * every search (one adapter call fewer per search; a mismatch costs a second resolution).
   */
  changeToken?: string;
}

export interface AggregateRequest extends SearchScope {
  facets: SearchField[];
  /** At most this many buckets per facet. */
  maxValues: number;
}

export interface FacetBucket {
  /** A number for number properties, else a string. */
  value: string | number;
  /** Matching documents that have this value (a document counts once per value). */
  count: number;
}

/**
 * One result per requested facet, in the same order, `field` as given. Buckets are ordered by count
 * descending, then by value ascending (numbers numerically before strings, strings by code units);
 * values no matching document has are absent.
 */
export interface FacetResult {
  field: SearchField;
  buckets: FacetBucket[];
}

/** The search index part. */
export interface SearchIndex {
  /**
   * Optional: finishes index work the part defers for speed (e.g. SQLite moves pending full-text
   * rows into FTS5 in one batch). `search` and `aggregate` do this themselves before answering; this is
   * for hosts and benchmarks that want the cost paid now.
   */
  flushSearchIndex?(): Promise<void>;

  /** Matching documents, ordered as `request.order` says; `total` counts every match, not only the page. */
  search(request: SearchRequest): Promise<SearchResponse>;
  /** One result per requested facet, in the order asked (see `FacetResult` for the bucket order). */
  aggregate(request: AggregateRequest): Promise<FacetResult[]>;
}

import type {
  AccessTokenList,
  ApplyJob,
  ApplyOptions,
  ApplyPreview,
  ApplyStatus,
  ApplyToMatchesInput,
  CreateAccessTokenInput,
  CreatedAccessToken,
  DefinitionChangePreview,
  DefinitionUpsertResult,
  EditValuesSummary,
  EntityDeletion,
  ExportCounts,
  ExportOptions,
  ExportRecord,
  ImportOptions,
  ListAccessTokensInput,
  PropertyValuesEdit,
  ReindexProgress,
  SearchScopeInput,
  StructuredPropertyDefinition,
  TimeseriesIndexSizeRecord,
  TruncateInput,
} from '../index';
import type { ChangeEvent } from '../adapter/types';
import type { AccessBackend } from './access-backend';

/** One entry of `properties upsert`: what happened to which URN. */
export interface PropertyUpsertOutcome {
  urn: string;
  outcome: DefinitionUpsertResult['outcome'];
}

/** A stored definition as the commands show it (read-back, YAML, listing). */
export interface PropertyRecord {
  urn: string;
  removed: boolean;
  definition: StructuredPropertyDefinition;
}

/** Which entities a command works on: as search takes them (entity types, full text, OR of ANDs of filters). */
export type EntityScope = Pick<SearchScopeInput, 'types' | 'orFilters'> & { query: string };

/** A page of matching entities with their visible structured property values, in URN order. */
export interface ValuesPage {
  entities: Array<{ urn: string; properties: Array<{ propertyUrn: string; values: Array<string | number> }> }>;
  /** Absent on the last page. */
  nextScrollId?: string;
  /** Matches in all. */
  total: number;
}

/**
 * What the commands need from a catalog, implemented twice: embedded (`--db`: the library on a local
 * SQLite file) and remote (`--server`: the REST family and /api/graphql). Each method is one call of
 * the public library or one request; the rules are the catalog's, in both modes.
 */
export interface CliBackend extends AccessBackend {
  /** For messages: `SQLite file <f>` or `<server url>`. */
  readonly where: string;
  /** The user the commands act as: the `--actor` super user (embedded) or the token's subject (remote). */
  actor(): Promise<string>;
  /** The command-line file's entries (already parsed from YAML), all validated, then written at once. */
  upsertProperties(entries: readonly unknown[]): Promise<PropertyUpsertOutcome[]>;
  /** What writing the file's entries would do (all validated first); writes nothing. */
  previewProperties(entries: readonly unknown[]): Promise<DefinitionChangePreview[]>;
  /** The definition, also when soft-deleted; undefined when it does not exist. */
  getProperty(urn: string): Promise<PropertyRecord | undefined>;
  /** Every definition, soft-deleted ones included, in URN order. */
  listProperties(): Promise<PropertyRecord[]>;
  deleteEntity(urn: string, options: { hard: boolean; dryRun: boolean }): Promise<EntityDeletion>;
  /** Brings a soft-deleted entity back (`status.removed` false). */
  restoreEntity(urn: string): Promise<void>;
  createToken(input: CreateAccessTokenInput): Promise<CreatedAccessToken>;
  listTokens(input: ListAccessTokensInput): Promise<AccessTokenList>;
  revokeToken(tokenId: string): Promise<boolean>;
  indexSizes(): Promise<TimeseriesIndexSizeRecord[]>;
  /** The catalog's answer: `Delete N out of M rows (P%). ...`. */
  /** `onProgress`: rows deleted so far of the rows to delete, where the work runs in this process (embedded). */
  /** `message` as the catalog words it (a real run ends `Task id: <id>.`); `taskId` for a real run. */
  truncateTimeseries(
    input: TruncateInput,
    onProgress?: (deleted: number, total: number) => void,
  ): Promise<{ message: string; taskId?: string }>;
  /** Rebuilds every search document; `onProgress` is called where the work runs in this process (embedded). */
  reindex(onProgress?: (progress: ReindexProgress) => void): Promise<ReindexProgress>;
  /** A page of the change feed (`{ events, next }`), after a cursor. */
  readChanges(options: { after?: string; limit?: number }): Promise<{ events: ChangeEvent[]; next: string }>;
  /** Every event after the cursor, then new ones as they are committed, until `signal` aborts. */
  followChanges(options: { after?: string; signal?: AbortSignal }): AsyncIterable<ChangeEvent>;
  /**
   * Writes change proposals (one chunk of `ingest`): all checked first, nothing written when one is bad
   * (INVALID_INPUT whose details name each bad proposal by index: `/<i>/...` embedded,
   * `/proposals/<i>/...` remote).
   */
  ingestProposals(proposals: readonly unknown[]): Promise<void>;
  /** The qualified names of the structured properties that have values among the matching entities. */
  propertiesWithValues(scope: EntityScope): Promise<string[]>;
  /** A page of the matching entities with their values (`count` entities at most). */
  scrollValues(scope: EntityScope, page: { scrollId?: string; count: number }): Promise<ValuesPage>;
  /**
   * `catalog.properties.editValues`: every edit checked first (INVALID_INPUT whose details name each
   * violation at `/<index>/...`, nothing written), then written in atomic chunks; `onChunk` reports
   * the entities handled so far.
   */
  editValues(
    edits: readonly PropertyValuesEdit[],
    options: { dryRun: boolean; onChunk?: (done: number, total: number) => void },
  ): Promise<EditValuesSummary>;
  /** Sets and removes structured properties on every match of a search: a dry run's answer, or the job queued. */
  applyToMatches(input: ApplyToMatchesInput, options: ApplyOptions): Promise<ApplyJob | ApplyPreview>;
  /**
   * Waits for an apply job to finish, calling `onProgress` with its status meanwhile: embedded, the job
   * runs here and now; against a server, its status is asked for every half second.
   */
  waitForApply(jobId: string, onProgress: (status: ApplyStatus) => void): Promise<ApplyStatus>;
  /** Embedded: runs the background work queued by the command (clean-up, truncation), then closes the file. */
  /** The whole catalog as export records (against a server: MANAGE_SYSTEM_OPERATIONS). */
  exportAll(options: ExportOptions): AsyncIterable<ExportRecord>;
  /** Writes a chunk of export records back as they were exported. */
  importRecords(records: readonly unknown[], options?: ImportOptions): Promise<ExportCounts>;
  close(): Promise<void>;
}

/** What a command says about the catalog it needs, before it is opened. */
export interface OpenRequirements {
  /** Embedded: create the SQLite file when it is missing (commands that write definitions or tokens). */
  create?: boolean;
  /** Embedded: the token signing key is needed (created beside the file when missing). */
  signingKey?: boolean;
}

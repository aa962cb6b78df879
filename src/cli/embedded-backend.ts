import { openCatalog, redactedUrl } from './open-catalog';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { TokenSigningAlgorithm } from '../core/tokens';
import { previewYamlDefinitions, upsertYamlDefinitions } from '../http/property-yaml';
import type { CliBackend, OpenRequirements, PropertyRecord } from './backend';
import { embeddedAccess } from './access-backend';
import { CommandError, type CommandIo } from './io';
import { algorithmOfKey, loadOrCreateSigningKey, signingKeyFileOf } from './signing-key';

const PAGE = 1000;
const PROPERTY_FIELD = 'structuredProperties.';
const VALUES_ASPECT = 'structuredProperties';

/**
 * Embedded mode (`--db <file>`, `--postgres <url>`): the library on a local SQLite file or a PostgreSQL
 * database, in this process. Whoever can write the store can change the catalog anyway, so the command
 * acts as a configured super user
 * (`--actor`, default urn:li:corpuser:admin). The token signing key is the one `metacatalog serve`
 * keeps beside the file (`<file>.signing-key`, mode 0600), so tokens made here work against the
 * served file. Background work (the clean-up after a hard delete, a truncation) runs before the
 * command exits: there is no server to run it later.
 */
export async function openEmbeddedBackend(
  store: { sqlite: string } | { postgres: string; schema?: string },
  actor: string,
  requirements: OpenRequirements,
  io: CommandIo,
): Promise<CliBackend> {
  const signing = 'sqlite' in store ? sqliteSigningKey(store.sqlite, requirements, io) : postgresSigningKey(requirements);
  const label = 'sqlite' in store ? store.sqlite : redactedUrl(store.postgres);
  // Background work runs in close(), after the command's own work, not alongside it.
  const catalog = await openCatalog(
    {
      store,
      superUser: actor,
      ...(signing !== undefined ? { tokenSigningKey: signing.key, tokenAlgorithm: signing.algorithm } : {}),
      backgroundJobs: false,
      label,
    },
    io,
  );

  const toRecord = (view: { urn: string; removed: boolean; definition: PropertyRecord['definition'] }): PropertyRecord => ({
    urn: view.urn,
    removed: view.removed,
    definition: view.definition,
  });

  return {
    // Policies and service accounts (src/cli/access-backend.ts).
    ...embeddedAccess(catalog, actor),
    where: 'sqlite' in store ? `SQLite file ${label}` : `PostgreSQL database ${label}`,
    actor: async () => actor,
    async upsertProperties(entries) {
      const results = await upsertYamlDefinitions(catalog, actor, entries);
      return results.map((r) => ({ urn: r.property.urn, outcome: r.outcome }));
    },
    previewProperties: (entries) => previewYamlDefinitions(catalog, actor, entries),
    async getProperty(urn) {
      const view = await catalog.properties.get(actor, urn);
      return view && toRecord(view);
    },
    async listProperties() {
      const records: PropertyRecord[] = [];
      let afterUrn: string | undefined;
      do {
        const page = await catalog.properties.list(actor, {
          includeRemoved: true,
          limit: PAGE,
          ...(afterUrn !== undefined ? { afterUrn } : {}),
        });
        records.push(...page.properties.map(toRecord));
        afterUrn = page.nextAfterUrn;
      } while (afterUrn !== undefined);
      return records;
    },
    deleteEntity: (urn, options) => catalog.entities.deleteEntity(actor, urn, options),
    async restoreEntity(urn) {
      await catalog.entities.restore(actor, urn);
    },
    createToken: (input) => catalog.tokens.create(actor, input),
    listTokens: (input) => catalog.tokens.list(actor, input),
    revokeToken: (tokenId) => catalog.tokens.revoke(actor, tokenId),
    indexSizes: () => catalog.timeseries.getIndexSizes(actor),
    async ingestProposals(proposals) {
      await catalog.entities.applyProposals(actor, proposals);
    },
    readChanges: (options) => catalog.changes.read(actor, options),
    followChanges: (options) => catalog.changes.follow(actor, options),
    async truncateTimeseries(input, onProgress) {
      const { message, taskId } = await catalog.timeseries.truncate(
        actor,
        input,
        onProgress ? { onProgress: (status) => onProgress(status.rowsDeleted, status.rowsToDelete) } : {},
      );
      // The background work of a real run, here and now, so that its progress is drawn while it runs.
      if (input.dryRun === false) await catalog.settle();
      return { message, ...(taskId !== undefined ? { taskId } : {}) };
    },
    exportAll: (options) => ({
      async *[Symbol.asyncIterator]() {
        yield* await catalog.exportAllAs(actor, options);
      },
    }),
    importRecords: (records, options) => catalog.importRecordsAs(actor, records, options),
    async propertiesWithValues(scope) {
      const { facets } = await catalog.search.aggregate(actor, { ...scope, searchFlags: { maxAggValues: 1 } });
      return facets.filter((f) => f.field.startsWith(PROPERTY_FIELD)).map((f) => f.field.slice(PROPERTY_FIELD.length));
    },
    async scrollValues(scope, page) {
      const found = await catalog.search.scroll(actor, {
        ...scope,
        count: page.count,
        ...(page.scrollId ? { scrollId: page.scrollId } : {}),
      });
      const urns = found.searchResults.map((r) => r.entity.urn);
      const views = await catalog.entities.getMany(actor, urns, { aspects: [VALUES_ASPECT] });
      return {
        entities: views.map((view) => ({
          urn: view.urn,
          properties: catalog.properties.valuesOf(view).map((a) => ({
            propertyUrn: a.propertyUrn,
            values: a.values.map((v) => ('double' in v ? v.double : v.string)),
          })),
        })),
        total: found.total,
        ...(found.nextScrollId ? { nextScrollId: found.nextScrollId } : {}),
      };
    },
    editValues: (edits, { dryRun, onChunk }) =>
      catalog.properties.editValues(actor, edits, { dryRun, ...(onChunk ? { onChunk: ({ done, total }) => onChunk(done, total) } : {}) }),
    applyToMatches: (input, options) => catalog.properties.applyToMatches(actor, input, options),
    async waitForApply(jobId, onProgress) {
      // The job's chunks run here; its status is read between them for the progress bar.
      let settled = false;
      const settling = catalog.settle().finally(() => {
        settled = true;
      });
      while (!settled) {
        onProgress(await catalog.properties.applyStatus(actor, jobId));
        await Promise.race([settling, new Promise((resolve) => setTimeout(resolve, 200))]);
      }
      await settling;
      return catalog.properties.applyStatus(actor, jobId);
    },
    reindex: (onProgress) => catalog.reindexAs(actor, { countTotal: onProgress !== undefined, ...(onProgress ? { onProgress } : {}) }),
    async close() {
      try {
        await catalog.settle();
      } finally {
        await catalog.close();
      }
    },
  };
}

/** The key `metacatalog serve` keeps beside the SQLite file; the file is made when the command may create it. */
/** A token signing key and its algorithm (the key file's content, or the environment's, tells which). */
interface SigningKey {
  key: string;
  algorithm: TokenSigningAlgorithm;
}

function sqliteSigningKey(db: string, requirements: OpenRequirements, io: CommandIo): SigningKey | undefined {
  const inMemory = db === ':memory:';
  if (!inMemory && !existsSync(db)) {
    if (!requirements.create)
      throw new CommandError(`there is no database at ${db} (check --db; properties upsert and tokens create make a new one)`);
    mkdirSync(dirname(resolve(db)), { recursive: true, mode: 0o700 });
  }
  const keyFile = signingKeyFileOf(db);
  if (inMemory || (!requirements.signingKey && !existsSync(keyFile))) return undefined;
  const loaded = loadOrCreateSigningKey(keyFile);
  if (loaded.created)
    io.stderr(`metacatalog: created the token signing key ${loaded.file} (mode 0600); keep it with the database, never share it\n`);
  return { key: loaded.key, algorithm: loaded.algorithm };
}

/** With --postgres the key every server on the database shares comes from the environment, as for `serve --postgres`. */
function postgresSigningKey(requirements: OpenRequirements): SigningKey | undefined {
  const key = process.env.METACATALOG_SIGNING_KEY || undefined;
  if (key === undefined && requirements.signingKey) {
    throw new CommandError('with --postgres, tokens need the signing key the servers share: set METACATALOG_SIGNING_KEY');
  }
  if (key === undefined) return undefined;
  const algorithm = algorithmOfKey(key.trim());
  if (algorithm === undefined) throw new CommandError('METACATALOG_SIGNING_KEY is a PEM key but not an Ed25519 or P-256 private key');
  return { key, algorithm };
}

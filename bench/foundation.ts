import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { analyzeText, createCatalog } from '../src';
import { generateDatasets, type GeneratedDataset } from './generator';
import { latencies, median, printTable, time, type Figure } from './harness';

const ADMIN = 'urn:li:corpuser:admin';

function datasetProperties(d: GeneratedDataset) {
  return { name: d.name, description: d.description, customProperties: { tier: d.tier, owner: d.owner } };
}

/** The baseline: the same rows written by hand into the library's own schema, in one transaction. */
function handWrittenBulkInsert(file: string, datasets: readonly GeneratedDataset[]): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // The entity row is its search document too (removed = 0).
  const insertEntity = db.prepare('INSERT INTO entities (urn, entity_type, version, removed) VALUES (?, ?, 1, 0)');
  // The compact layout: aspect names and actors are dictionary ids; plain JSON is a valid packed value.
  const word = db.prepare('INSERT INTO dictionary (text) VALUES (?)');
  const nameId = Number(word.run('datasetProperties').lastInsertRowid);
  // Value rows hold the entity type's dictionary id (in decimal), not its name.
  const datasetKey = String(word.run('dataset').lastInsertRowid);
  const actorId = Number(word.run(ADMIN).lastInsertRowid);
  const insertAspect = db.prepare(
    `INSERT INTO aspects (entity_id, name_id, value, version, created_time, created_actor, modified_time, modified_actor, system_metadata)
     VALUES (?, ${nameId}, ?, 1, ?, ${actorId}, ?, ${actorId}, NULL)`,
  );
  const insertKey = db.prepare("INSERT INTO search_keys (kind, name, def_key) VALUES ('field', ?, '')");
  // One value per field: it is both the smallest and the largest (flags 1 | 2) and the first (4).
  const insertValue = db.prepare(
    `INSERT INTO search_values (entity_id, key_id, value, removed, entity_type, flags) VALUES (?, ?, ?, 0, '${datasetKey}', 7)`,
  );
  const insertText = db.prepare('INSERT INTO search_text (rowid, name, description, urn_key) VALUES (?, ?, ?, ?)');
  // The full-text index holds analysed terms (src/adapter/text-analysis.ts), as the adapter writes them.
  const terms = (text: string) => analyzeText(text).join(' ');
  const now = Date.now();
  db.transaction(() => {
    const key = { platform: 0, name: 0, origin: 0 };
    for (const field of Object.keys(key) as Array<keyof typeof key>) key[field] = Number(insertKey.run(field).lastInsertRowid);
    for (const d of datasets) {
      const id = Number(insertEntity.run(d.urn, 'dataset').lastInsertRowid);
      insertAspect.run(id, JSON.stringify(datasetProperties(d)), now, now);
      insertValue.run(id, key.platform, d.platform);
      insertValue.run(id, key.name, d.name);
      insertValue.run(id, key.origin, 'PROD');
      insertText.run(id, terms(d.name), terms(d.description), terms(d.urn.slice('urn:li:dataset:'.length)));
    }
  })();
  db.close();
}

export async function runFoundationBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-bench-'));
  const datasets = [...generateDatasets({ count, seed: 7 })];
  const figures: Figure[] = [];
  try {
    // Baseline: an empty file with the library's schema, then hand-written inserts.
    const baselineFile = join(dir, 'baseline.db');
    const schemaOnly = createSqliteAdapter({ filename: baselineFile });
    await schemaOnly.open();
    await schemaOnly.close();
    const baseline = await time(() => handWrittenBulkInsert(baselineFile, datasets));

    const adapter = createSqliteAdapter({ filename: join(dir, 'api.db') });
    const catalog = createCatalog({ adapter, superUsers: [ADMIN] });
    await catalog.ready();
    // Timed until everything is searchable: the deferred full-text rows are flushed inside the measurement.
    const api = await time(async () => {
      await catalog.entities.upsertMany(
        ADMIN,
        datasets.map((d) => ({ urn: d.urn, aspects: { datasetProperties: datasetProperties(d) } })),
      );
      await adapter.flushSearchIndex?.();
    });
    const apiRate = count / (api.ms / 1000);
    const baseRate = count / (baseline.ms / 1000);
    figures.push({
      workload: `bulk upsert ${count.toLocaleString('en-US')} datasets (SQLite file)`,
      unit: 'entities/s',
      value: apiRate,
      baseline: baseRate,
      baselineName: 'hand-written inserts, one transaction',
      better: 'higher',
      goal: '≥ 0.5× baseline',
      met: apiRate / baseRate >= 0.5,
    });

    // Single-entity upserts: one call, one transaction each.
    const singles = [...generateDatasets({ count: 2_000, seed: 8 })];
    const single = await time(async () => {
      for (const d of singles) await catalog.entities.upsertAspect(ADMIN, d.urn, 'datasetProperties', datasetProperties(d));
    });
    const singleRate = singles.length / (single.ms / 1000);
    figures.push({
      workload: 'single-entity upsert (SQLite file)',
      unit: 'upserts/s',
      value: singleRate,
      better: 'higher',
      goal: '≥ 2,000/s',
      met: singleRate >= 2000,
    });

    // Point reads by URN against a prepared SELECT plus JSON parse.
    const reads = 20_000;
    const urns = Array.from({ length: reads }, (_, i) => datasets[(i * 7919) % count]!.urn);
    const apiReads = await latencies(reads, (i) => catalog.entities.get(ADMIN, urns[i]!));
    await catalog.close();
    const db = new Database(baselineFile, { readonly: true });
    const select = db.prepare(
      `SELECT e.urn, e.entity_type, e.version, n.text AS name, a.value, a.version AS aspect_version, a.created_time, c.text AS created_actor,
              a.modified_time, m.text AS modified_actor FROM entities e JOIN aspects a ON a.entity_id = e.entity_id JOIN dictionary n ON n.id = a.name_id
              JOIN dictionary c ON c.id = a.created_actor JOIN dictionary m ON m.id = a.modified_actor WHERE e.urn = ?`,
    );
    const handReads = await latencies(reads, (i) => {
      const rows = select.all(urns[i]) as Array<{ value: string }>;
      return rows.map((r) => JSON.parse(r.value) as unknown);
    });
    db.close();
    const apiReadRate = 1000 / median(apiReads);
    const handReadRate = 1000 / median(handReads);
    figures.push({
      workload: 'point read of an entity by URN (median)',
      unit: 'reads/s',
      value: apiReadRate,
      baseline: handReadRate,
      baselineName: 'prepared SELECT + JSON.parse',
      better: 'higher',
      goal: '≥ 0.5× baseline',
      met: apiReadRate / handReadRate >= 0.5,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable('Foundation (SQLite)', figures);
  return figures;
}

/**
 * `npm run bench -- preview-change [--entities N]` (default 1,000,000): `catalog.properties.previewChange`
 * on a SQLite file of N datasets, 15% of them holding a MULTIPLE string property (one to three of five
 * allowed values). Times three previews — a removed allowed value, MULTIPLE → SINGLE, a version bump —
 * and a fourth with a removed value and MULTIPLE → SINGLE at once — against the goal of under a second,
 * with the brute force they avoid (a scan of every entity's values, timed once) as the baseline, and
 * checks that the scan counts what the previews count.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type EntityUpsert, type PreviewChangeInput } from '../src';
import { median, printTable, time, type Figure } from './harness';
import { peakRssMb } from './volume-data';

const ADMIN = 'urn:li:corpuser:admin';
const TIER = 'urn:li:structuredProperty:bench.preview.tier';
const TIERS = ['gold', 'silver', 'bronze', 'tin', 'lead'];
const SHARE = 0.15;
const CALL_SIZE = 2_000;
const RUNS = 5;
const GOAL_MS = 1_000;

const stored: PreviewChangeInput = {
  urn: TIER,
  qualifiedName: 'bench.preview.tier',
  valueType: 'urn:li:dataType:datahub.string',
  entityTypes: ['urn:li:entityType:datahub.dataset'],
  cardinality: 'MULTIPLE',
  allowedValues: TIERS.map((t) => ({ value: { string: t } })),
  version: '20240101000000',
};

/** A seeded generator (the same catalog every run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function* batches(count: number): Generator<EntityUpsert[]> {
  const next = random(28);
  let batch: EntityUpsert[] = [];
  for (let i = 0; i < count; i++) {
    const urn = `urn:li:dataset:(urn:li:dataPlatform:hive,bench.preview.t${String(i).padStart(7, '0')},PROD)`;
    const aspects: EntityUpsert['aspects'] = { datasetProperties: { name: `t${i}` } };
    if (next() < SHARE) {
      const pool = [...TIERS];
      const held = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pool.splice(Math.floor(next() * pool.length), 1)[0]!);
      aspects.structuredProperties = { properties: [{ propertyUrn: TIER, values: held.map((string) => ({ string })) }] };
    }
    batch.push({ urn, aspects });
    if (batch.length === CALL_SIZE) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

export async function runPreviewChangeBench(options: { entities?: number } = {}): Promise<void> {
  const count = options.entities ?? 1_000_000;
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-preview-bench-'));
  const adapter = createSqliteAdapter({ filename: join(dir, 'catalog.db'), durability: 'normal' });
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  try {
    await catalog.ready();
    await catalog.properties.upsert(ADMIN, stored);
    const load = await time(async () => {
      for (const batch of batches(count)) await catalog.entities.upsertMany(ADMIN, batch);
      await adapter.flushSearchIndex?.();
    });
    console.log(
      `loaded ${count.toLocaleString('en-US')} datasets in ${(load.ms / 1000).toFixed(1)} s; peak RSS ${peakRssMb().toFixed(0)} MB`,
    );

    // The brute force the preview avoids: every entity's values read once, all three answers counted.
    const scan = await time(async () => {
      const counts = { tin: 0, several: 0, holders: 0, either: 0 };
      let afterUrn: string | undefined;
      for (;;) {
        const page = await adapter.scanEntities({ entityType: 'dataset', aspectNames: ['structuredProperties'], afterUrn, limit: 5_000 });
        for (const entity of page) {
          const properties = (entity.aspects.structuredProperties?.value.properties ?? []) as Array<{ values: Array<{ string?: string }> }>;
          const values = properties[0]?.values ?? [];
          if (values.length === 0) continue;
          counts.holders++;
          if (values.length > 1) counts.several++;
          const tin = values.some((v) => v.string === 'tin');
          if (tin) counts.tin++;
          if (tin || values.length > 1) counts.either++;
        }
        if (page.length < 5_000) return counts;
        afterUrn = page.at(-1)!.urn;
      }
    });

    const withoutTin = TIERS.filter((t) => t !== 'tin').map((t) => ({ value: { string: t } }));
    const cases: Array<{ label: string; input: PreviewChangeInput; expected: number }> = [
      {
        label: 'a removed allowed value ("tin")',
        input: { ...stored, allowedValues: withoutTin },
        expected: scan.result.tin,
      },
      { label: 'MULTIPLE → SINGLE', input: { ...stored, cardinality: 'SINGLE' }, expected: scan.result.several },
      { label: 'a version bump', input: { ...stored, version: '20250101000000' }, expected: scan.result.holders },
      // Both at once: the entities breaking both rules are counted once.
      {
        label: 'both a removed value and MULTIPLE → SINGLE',
        input: { ...stored, cardinality: 'SINGLE', allowedValues: withoutTin },
        expected: scan.result.either,
      },
    ];
    const figures: Figure[] = [];
    for (const c of cases) {
      await catalog.properties.previewChange(ADMIN, c.input);
      const times: number[] = [];
      let affected = -1;
      for (let i = 0; i < RUNS; i++) {
        const run = await time(() => catalog.properties.previewChange(ADMIN, c.input));
        times.push(run.ms);
        affected = run.result.affected;
      }
      const slowest = Math.max(...times);
      console.log(
        `${c.label}: affected ${affected.toLocaleString('en-US')} (the scan counts ${c.expected.toLocaleString('en-US')}: ${affected === c.expected ? 'agree' : 'DISAGREE'}); ` +
          `${RUNS} runs ${times.map((t) => t.toFixed(0)).join(', ')} ms`,
      );
      figures.push({
        workload: `previewChange at ${count.toLocaleString('en-US')} datasets: ${c.label}, median of ${RUNS} (slowest ${slowest.toFixed(0)} ms)`,
        unit: 'ms',
        value: median(times),
        baseline: scan.ms,
        baselineName: 'scan of every entity',
        better: 'lower',
        goal: `< ${GOAL_MS} ms (every run)`,
        met: slowest < GOAL_MS && affected === c.expected,
      });
    }
    printTable('Impact of a definition change (SQLite)', figures);
  } finally {
    await catalog.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

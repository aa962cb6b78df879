import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ADMIN, EXAMPLE_YAML, removeTempDirs, requireBuiltCli, runCli, tempDir, withCatalog } from './helpers';
import { MODES, withMode as withModeOf, type ModeCatalog } from './modes';

// Each test runs the CLI as a child process many times (about half a second each, more on a busy machine).
vi.setConfig({ testTimeout: 180_000 });

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const SLA = 'urn:li:structuredProperty:io.acryl.dataManagement.replicationSLA';
const ENUM = 'urn:li:structuredProperty:io.acryl.privacy.enumProperty5712';
const DATASET_1 = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
const DATASET_2 = 'urn:li:dataset:(urn:li:dataPlatform:hive,customers,PROD)';

const RETENTION_READ_BACK = {
  urn: RETENTION,
  qualified_name: 'io.acryl.privacy.retentionTime',
  type: 'urn:li:dataType:datahub.number',
  description: 'Retention Time is used to figure out how long to retain records in a dataset',
  display_name: 'Retention Time',
  entity_types: ['urn:li:entityType:datahub.dataset', 'urn:li:entityType:datahub.dataFlow'],
  cardinality: 'MULTIPLE',
  allowed_values: [
    { value: '30', description: '30 days, usually reserved for datasets that are ephemeral and contain pii' },
    { value: '90', description: 'Use this for datasets that drive monthly reporting but contain pii' },
    { value: '365', description: 'Use this for non-sensitive data that can be retained for longer' },
  ],
};

beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

/** Writes values of a property on datasets: through the library (embedded) or the REST family (remote). */
async function setValues(mc: ModeCatalog, property: string, datasets: readonly string[], value: number): Promise<void> {
  for (const urn of datasets) {
    const body = { properties: [{ propertyUrn: property, values: [{ double: value }] }] };
    if (mc.server) {
      const response = await fetch(`${mc.server.url}/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/structuredProperties`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mc.server.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
    } else {
      await withCatalog(mc.db, (catalog) => catalog.properties.upsertValues(ADMIN, urn, body));
    }
  }
}

function yamlFile(text: string): string {
  const file = join(tempDir(), 'definitions.yaml');
  writeFileSync(file, text);
  return file;
}

describe.each(MODES)('properties ($name)', (mode) => {
  const withMode = (work: Parameters<typeof withModeOf>[1]) => withModeOf(mode, work);

  it("upserts the seed's example file, reports created / unchanged / updated, and reads back the contract form", async () => {
    await withMode(async (_mc, cli) => {
      const created = await cli('properties', 'upsert', '-f', EXAMPLE_YAML);
      expect(created).toMatchObject({ code: 0, stderr: '' });
      expect(created.stdout).toBe(
        [`Created structured property ${RETENTION}`, `Created structured property ${SLA}`, `Created structured property ${ENUM}`, ''].join(
          '\n',
        ),
      );

      const again = await cli('properties', 'upsert', '-f', EXAMPLE_YAML);
      expect(again.code).toBe(0);
      expect(again.stdout.split('\n').filter(Boolean)).toEqual([RETENTION, SLA, ENUM].map((u) => `Unchanged structured property ${u}`));

      const read = await cli('properties', 'get', '--urn', RETENTION);
      expect(read.code).toBe(0);
      expect(JSON.parse(read.stdout)).toEqual(RETENTION_READ_BACK);
      // A bare id names the same property.
      expect(JSON.parse((await cli('properties', 'get', '--urn', 'io.acryl.privacy.retentionTime')).stdout)).toEqual(RETENTION_READ_BACK);
      expect(JSON.parse((await cli('properties', 'get', '--urn', ENUM)).stdout)).toEqual({
        urn: ENUM,
        qualified_name: 'io.acryl.privacy.enumProperty5712',
        type: 'urn:li:dataType:datahub.string',
        description: 'The retention policy for the dataset',
        entity_types: ['urn:li:entityType:datahub.dataset'],
        cardinality: 'SINGLE',
        allowed_values: [{ value: 'foo' }, { value: 'bar' }],
      });

      const changed = yamlFile(
        readFileSync(EXAMPLE_YAML, 'utf8').replace('display_name: Replication SLA', 'display_name: Replication SLA (hours)'),
      );
      const updated = await cli('properties', 'upsert', '-f', changed, '--json');
      expect(updated.code).toBe(0);
      expect(JSON.parse(updated.stdout)).toEqual([
        { urn: RETENTION, outcome: 'unchanged' },
        { urn: SLA, outcome: 'updated' },
        { urn: ENUM, outcome: 'unchanged' },
      ]);
      expect(JSON.parse((await cli('properties', 'get', '--urn', SLA)).stdout).display_name).toBe('Replication SLA (hours)');
    });
  });

  it("--dry-run prints each entry's impact (breaking, why, the entities affected with their values) and writes nothing", async () => {
    await withMode(async (mc, cli) => {
      expect((await cli('properties', 'upsert', '-f', EXAMPLE_YAML)).code).toBe(0);
      await setValues(mc, RETENTION, [DATASET_1], 30);
      await setValues(mc, RETENTION, [DATASET_2], 90);
      const file = yamlFile(`
- id: io.acryl.privacy.retentionTime
  type: number
  cardinality: MULTIPLE
  entity_types: [dataset, dataFlow]
  allowed_values:
    - value: 90
    - value: 365
- id: io.acryl.privacy.fresh
  type: string
  entity_types: [dataset]
`);
      const FRESH = 'urn:li:structuredProperty:io.acryl.privacy.fresh';
      const printed = await cli('properties', 'upsert', '-f', file, '--dry-run');
      expect(printed).toMatchObject({ code: 0, stderr: '' });
      expect(printed.stdout.split('\n')).toEqual([
        `Dry run: would refuse the change to structured property ${RETENTION} (breaking)`,
        '  - Removing the allowed value(s) 30.',
        expect.stringMatching(/^ {2}- Without a version .* the change is refused/),
        '  1 entity holds values the new definition refuses, for example:',
        `    ${DATASET_1}: 30`,
        `Dry run: would create structured property ${FRESH}`,
        '',
      ]);
      const json = await cli('properties', 'upsert', '-f', file, '--dry-run', '--json');
      expect(JSON.parse(json.stdout)).toEqual([
        expect.objectContaining({
          urn: RETENTION,
          outcome: 'refused',
          breaking: true,
          affected: 1,
          sample: [{ urn: DATASET_1, values: [{ double: 30 }] }],
        }),
        { urn: FRESH, outcome: 'created', breaking: false, reasons: [], affected: 0, sample: [] },
      ]);
      // Nothing was written.
      expect(JSON.parse((await cli('properties', 'get', '--urn', RETENTION)).stdout)).toEqual(RETENTION_READ_BACK);
      expect(JSON.parse((await cli('properties', 'list', '--json')).stdout)).toHaveLength(3);

      const bad = await cli(
        'properties',
        'upsert',
        '-f',
        yamlFile('- id: io.acryl.bad\n  type: colour\n  entity_types: [dataset]\n'),
        '--dry-run',
      );
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('entry 0 (io.acryl.bad), field type');
    });
  });

  it('writes YAML with --to-file that upsert accepts again (round trip, also into another catalog)', async () => {
    await withMode(async (_mc, cli) => {
      expect((await cli('properties', 'upsert', '-f', EXAMPLE_YAML)).code).toBe(0);
      const dir = tempDir();
      const readBacks: unknown[] = [];
      for (const urn of [RETENTION, SLA, ENUM]) {
        const file = join(dir, `${urn.split(':').pop()}.yaml`);
        const written = await cli('properties', 'get', '--urn', urn, '--to-file', file);
        expect(written).toMatchObject({ code: 0, stdout: `Wrote ${urn} to ${file}\n` });
        const entries = parseYaml(readFileSync(file, 'utf8')) as Array<Record<string, unknown>>;
        expect(entries).toHaveLength(1);
        expect(entries[0]).toMatchObject({ id: urn.split(':').pop(), qualified_name: urn.split(':').pop() });
        // The same catalog: nothing changes.
        expect((await cli('properties', 'upsert', '-f', file)).stdout).toBe(`Unchanged structured property ${urn}\n`);
        readBacks.push(JSON.parse((await cli('properties', 'get', '--urn', urn)).stdout));

        // A fresh embedded catalog: created, and it reads back the same.
        const other = join(tempDir(), 'other.db');
        expect((await runCli(['properties', 'upsert', '-f', file, '--db', other])).stdout).toBe(`Created structured property ${urn}\n`);
        const copy = await runCli(['properties', 'get', '--urn', urn, '--db', other]);
        expect(JSON.parse(copy.stdout)).toEqual(readBacks.at(-1));
      }
      expect(readBacks[0]).toEqual(RETENTION_READ_BACK);
    });
  });

  it('lists the definitions, soft-deleted ones marked; --details gives the read-back forms', async () => {
    await withMode(async (_mc, cli) => {
      expect((await cli('properties', 'list')).stdout).toBe('');
      await cli('properties', 'upsert', '-f', EXAMPLE_YAML);
      expect((await cli('delete', '--urn', ENUM)).code).toBe(0);
      const listed = await cli('properties', 'list');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toBe(`${SLA}\n${ENUM} (soft-deleted)\n${RETENTION}\n`);
      expect(JSON.parse((await cli('properties', 'list', '--json')).stdout)).toEqual([
        { urn: SLA, removed: false },
        { urn: ENUM, removed: true },
        { urn: RETENTION, removed: false },
      ]);
      const details = JSON.parse((await cli('properties', 'list', '--details')).stdout) as Array<Record<string, unknown>>;
      expect(details.map((d) => [d.urn, d.removed])).toEqual([
        [SLA, false],
        [ENUM, true],
        [RETENTION, false],
      ]);
      expect(details[2]).toEqual({ ...RETENTION_READ_BACK, removed: false });
      // get still shows a soft-deleted definition, with a note on stderr.
      const soft = await cli('properties', 'get', '--urn', ENUM);
      expect(soft.code).toBe(0);
      expect(soft.stderr).toBe(`note: ${ENUM} is soft-deleted (its values are hidden until it is restored)\n`);
    });
  });

  it('a YAML syntax error names its line and column; nothing is written (exit 1)', async () => {
    await withMode(async (_mc, cli) => {
      const file = yamlFile('- id: io.a\n  type: string\n  entity_types: [dataset\n- id: io.b\n');
      const result = await cli('properties', 'upsert', '-f', file);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        new RegExp(`^metacatalog properties upsert: ${file}: the YAML file cannot be read: .+ at line \\d+, column \\d+\\n$`),
      );
      expect((await cli('properties', 'list')).stdout).toBe('');
    });
  });

  it('bad entries are named by index and field, and nothing is written when one is bad (exit 1)', async () => {
    await withMode(async (_mc, cli) => {
      const file = yamlFile(
        [
          '- id: io.good',
          '  type: string',
          '  entity_types: [dataset]',
          '- id: io.bad',
          '  type: numbr',
          '  entity_types: [dataset]',
          '- id: io.worse',
          '  type: number',
          '  entity_types: [dataset]',
          '  allowed_values:',
          '    - value: thirty',
          '  colour: red',
          '',
        ].join('\n'),
      );
      const result = await cli('properties', 'upsert', '-f', file);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const line = result.stderr;
      expect(line.split('\n')).toHaveLength(2); // one line and its newline
      expect(line).toContain(`metacatalog properties upsert: ${file}: invalid structured property definition; nothing was written:`);
      expect(line).toContain('entry 1 (io.bad), field type: unknown value type "numbr"');
      expect(line).toContain('entry 2 (io.worse), field colour: is not an allowed field');
      expect(line).not.toContain('entry 0');
      expect((await cli('properties', 'list')).stdout).toBe('');

      const json = await cli('properties', 'upsert', '-f', file, '--json');
      expect(json.code).toBe(1);
      const error = JSON.parse(json.stderr) as { error: { code: string; exitCode: number; details: Array<{ path: string }> } };
      expect(error.error.code).toBe('INVALID_INPUT');
      expect(error.error.exitCode).toBe(1);
      expect(error.error.details.map((d) => d.path)).toEqual(['/1/type', '/2/colour']);

      const values = yamlFile('- id: io.worse\n  type: number\n  entity_types: [dataset]\n  allowed_values:\n    - value: thirty\n');
      const typed = await cli('properties', 'upsert', '-f', values);
      expect(typed.code).toBe(1);
      expect(typed.stderr).toContain('entry 0 (io.worse), field allowed_values[0].value:');
    });
  });

  it('a breaking change without a new version is refused (exit 1) and applies with one', async () => {
    await withMode(async (_mc, cli) => {
      await cli('properties', 'upsert', '-f', EXAMPLE_YAML);
      const single = yamlFile(readFileSync(EXAMPLE_YAML, 'utf8').replace('cardinality: MULTIPLE', 'cardinality: SINGLE'));
      const refused = await cli('properties', 'upsert', '-f', single);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('entry 0 (io.acryl.privacy.retentionTime), field cardinality:');
      expect(JSON.parse((await cli('properties', 'get', '--urn', RETENTION)).stdout).cardinality).toBe('MULTIPLE');
      const versioned = yamlFile(
        readFileSync(single, 'utf8').replace('cardinality: SINGLE', 'cardinality: SINGLE\n  version: "20240614080000"'),
      );
      const applied = await cli('properties', 'upsert', '-f', versioned);
      expect(applied.code).toBe(0);
      expect(applied.stdout).toContain(`Updated structured property ${RETENTION}`);
      expect(JSON.parse((await cli('properties', 'get', '--urn', RETENTION)).stdout)).toMatchObject({
        cardinality: 'SINGLE',
        version: '20240614080000',
      });
    });
  });

  it('get of a property that does not exist fails with exit 1 (JSON on stderr with --json)', async () => {
    await withMode(async (_mc, cli) => {
      await cli('properties', 'upsert', '-f', EXAMPLE_YAML);
      const missing = await cli('properties', 'get', '--urn', 'io.nope');
      expect(missing).toMatchObject({
        code: 1,
        stdout: '',
        stderr: 'metacatalog properties get: structured property urn:li:structuredProperty:io.nope does not exist\n',
      });
      const json = await cli('properties', 'get', '--urn', 'io.nope', '--json');
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stderr)).toEqual({
        error: { code: 'NOT_FOUND', message: 'structured property urn:li:structuredProperty:io.nope does not exist', exitCode: 1 },
      });
    });
  });

  it('delete: soft by default with the count of entities carrying values, dry runs, hard with --force', async () => {
    await withMode(async (mc, cli) => {
      await cli('properties', 'upsert', '-f', EXAMPLE_YAML);
      await setValues(mc, RETENTION, [DATASET_1, DATASET_2], 30);

      const dry = await cli('delete', '--urn', RETENTION, '--dry-run');
      expect(dry).toMatchObject({ code: 0, stderr: '' });
      expect(dry.stdout).toBe(
        `Dry run: would soft-delete structured property ${RETENTION}; its values on 2 entities would be hidden, not removed (they come back when it is restored)\n`,
      );
      expect(JSON.parse((await cli('properties', 'list', '--json')).stdout)).toContainEqual({ urn: RETENTION, removed: false });

      const soft = await cli('delete', '--urn', RETENTION);
      expect(soft.code).toBe(0);
      expect(soft.stdout).toBe(
        `Soft-deleted structured property ${RETENTION}; its values on 2 entities are hidden, not removed (they come back when it is restored)\n`,
      );
      expect((await cli('delete', '--urn', RETENTION)).stdout).toBe(
        `structured property ${RETENTION} is soft-deleted already; nothing changed\n`,
      );
      // Restored, it comes back with its values; and delete takes the bare name, as get does.
      expect(await cli('restore', '--urn', 'io.acryl.privacy.retentionTime')).toMatchObject({ code: 0, stdout: `Restored ${RETENTION}\n` });
      expect(JSON.parse((await cli('properties', 'list', '--json')).stdout)).toContainEqual({ urn: RETENTION, removed: false });
      expect((await cli('delete', '--urn', 'io.acryl.privacy.retentionTime')).stdout).toMatch(/^Soft-deleted structured property/);
      expect((await cli('restore', '--urn', 'urn:li:structuredProperty:never.defined')).code).toBe(1);

      const refused = await cli('delete', '--urn', RETENTION, '--hard');
      expect(refused).toMatchObject({
        code: 2,
        stdout: '',
        stderr:
          'metacatalog delete: a hard delete cannot be undone: run it on a terminal to confirm, or pass --force (see metacatalog delete --help)\n',
      });
      const hardDry = await cli('delete', '--urn', RETENTION, '--hard', '--dry-run', '--json');
      expect(JSON.parse(hardDry.stdout)).toEqual({
        urn: RETENTION,
        entityType: 'structuredProperty',
        mode: 'hard',
        dryRun: true,
        changed: true,
        entitiesWithValues: 2,
      });

      const hard = await cli('delete', '--urn', RETENTION, '--hard', '--force');
      expect(hard.code).toBe(0);
      expect(hard.stdout).toBe(
        `Hard-deleted structured property ${RETENTION}; the background clean-up will remove its values from 2 entities\n`,
      );
      expect((await cli('properties', 'get', '--urn', RETENTION)).code).toBe(1);
      const again = await cli('delete', '--urn', RETENTION, '--hard', '--force');
      expect(again).toMatchObject({ code: 1, stderr: `metacatalog delete: structured property ${RETENTION} does not exist\n` });

      if (!mc.server) {
        // Embedded: the clean-up ran before the command exited.
        await withCatalog(mc.db, async (catalog) => {
          expect(await catalog.listJobs()).toEqual([]);
          const stored = await catalog.entities.get(ADMIN, DATASET_1);
          expect(stored?.aspects.structuredProperties?.value).toEqual({ properties: [] });
        });
      }
    });
  });

  it('delete of another entity: soft writes status, hard removes it', async () => {
    await withMode(async (mc, cli) => {
      await cli('properties', 'upsert', '-f', EXAMPLE_YAML);
      await setValues(mc, SLA, [DATASET_1], 4);
      const soft = await cli('delete', '--urn', DATASET_1, '--json');
      expect(JSON.parse(soft.stdout)).toEqual({ urn: DATASET_1, entityType: 'dataset', mode: 'soft', dryRun: false, changed: true });
      expect((await cli('delete', '--urn', DATASET_1, '--hard', '--force')).stdout).toBe(`Hard-deleted ${DATASET_1}\n`);
      const gone = await cli('delete', '--urn', DATASET_1, '--hard', '--force');
      expect(gone).toMatchObject({ code: 1, stderr: `metacatalog delete: ${DATASET_1} does not exist\n` });
    });
  });
});

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN, EXAMPLE_YAML, removeTempDirs, requireBuiltCli, runCli, serveInProcess, withCatalog } from './helpers';
import { MODES, withMode as withModeOf, type ModeCatalog } from './modes';

// Each test runs the CLI as a child process many times (about half a second each, more on a busy machine).
vi.setConfig({ testTimeout: 180_000 });

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
const DAY = 86_400_000;

beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

/** 6 rows 40 to 45 days old and 4 rows of the last days. */
async function appendProfiles(mc: ModeCatalog): Promise<void> {
  const now = Date.now();
  const rows = [...[40, 41, 42, 43, 44, 45].map((d) => now - d * DAY), ...[1, 2, 3, 4].map((d) => now - d * DAY)].map(
    (timestampMillis, i) => ({ timestampMillis, rowCount: i }),
  );
  if (mc.server) {
    for (const row of rows) {
      const response = await fetch(`${mc.server.url}/openapi/v2/entity/dataset/${encodeURIComponent(DATASET)}/datasetProfile`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mc.server.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(row),
      });
      expect(response.status).toBe(200);
    }
  } else {
    await withCatalog(mc.db, (catalog) => catalog.timeseries.append(ADMIN, DATASET, 'datasetProfile', rows));
  }
}

describe.each(MODES)('operations ($name)', (mode) => {
  const withMode = (work: Parameters<typeof withModeOf>[1]) => withModeOf(mode, work);

  it('tokens create, list and revoke', async () => {
    await withMode(async (_mc, cli) => {
      // Embedded mode makes the database (and its signing key) when the first token is created.
      const created = await cli('tokens', 'create', '--name', 'ci', '--duration', 'one_week');
      expect(created.code).toBe(0);
      const token = created.stdout.trim();
      expect(token.split('.')).toHaveLength(3);
      const id = /^Created access token (\S+) "ci" for urn:li:corpuser:admin, expires \S+; it is shown only now:$/m.exec(
        created.stderr,
      )?.[1];
      expect(id).toBeTruthy();

      const listed = await cli('tokens', 'list', '--json');
      expect(listed.code).toBe(0);
      const list = JSON.parse(listed.stdout) as {
        total: number;
        tokens: Array<{ id: string; name: string; type: string; ownerUrn: string }>;
      };
      expect(list.tokens.find((t) => t.id === id)).toMatchObject({ name: 'ci', type: 'PERSONAL', ownerUrn: ADMIN });
      expect((await cli('tokens', 'list')).stdout).toContain(`${id}  "ci"  for ${ADMIN}  by ${ADMIN}  expires `);

      const revoked = await cli('tokens', 'revoke', '--id', id!);
      expect(revoked).toMatchObject({ code: 0, stdout: `Revoked access token ${id}\n` });
      const after = JSON.parse((await cli('tokens', 'list', '--json')).stdout) as { tokens: Array<{ id: string }> };
      expect(after.tokens.map((t) => t.id)).not.toContain(id);
      const again = await cli('tokens', 'revoke', '--id', id!);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^metacatalog tokens revoke: .*\n$/);

      const badDuration = await cli('tokens', 'create', '--name', 'x', '--duration', 'forever');
      expect(badDuration.code).toBe(2);
      expect(badDuration.stderr).toContain('--duration must be one of ONE_HOUR, ONE_DAY');
    });
  });

  it('index-sizes lists every timeseries index', async () => {
    await withMode(async (mc, cli) => {
      if (!mc.server) expect((await cli('properties', 'upsert', '-f', EXAMPLE_YAML)).code).toBe(0);
      await appendProfiles(mc);
      const text = await cli('index-sizes');
      expect(text.code).toBe(0);
      expect(text.stdout.split('\n')[0]).toMatch(/^index\s+entity\s+aspect\s+size \(MB\)$/);
      expect(text.stdout).toMatch(/^dataset_datasetprofileaspect_v1\s+dataset\s+datasetprofile\s+\d+\.\d{6}$/m);
      const json = JSON.parse((await cli('index-sizes', '--json')).stdout) as Array<{
        indexName: string;
        entityName: string;
        aspectName: string;
        sizeMb: number;
      }>;
      const profile = json.find((r) => r.indexName === 'dataset_datasetprofileaspect_v1');
      expect(profile).toMatchObject({ entityName: 'dataset', aspectName: 'datasetprofile' });
      expect(profile!.sizeMb).toBeGreaterThan(0);
    });
  });

  it('truncate-timeseries: --dry-run counts, a real run needs --force off a terminal, then deletes', async () => {
    await withMode(async (mc, cli) => {
      if (!mc.server) expect((await cli('properties', 'upsert', '-f', EXAMPLE_YAML)).code).toBe(0);
      await appendProfiles(mc);
      const args = ['truncate-timeseries', '--entity-type', 'dataset', '--aspect', 'datasetProfile', '--older-than', '30d'];
      const dry = await cli(...args, '--dry-run');
      expect(dry).toMatchObject({ code: 0, stderr: '' });
      expect(dry.stdout).toBe(
        'Delete 6 out of 10 rows (60.00%). Reindexing the aspect without the deleted records. This was a dry run: run it again without --dry-run to delete them.\n',
      );

      const refused = await cli(...args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        'metacatalog truncate-timeseries: a truncation deletes rows for good: run it on a terminal to confirm, pass --force, or count with --dry-run (see metacatalog truncate-timeseries --help)\n',
      );
      // The aspect as index-sizes prints it (lower case) is accepted.
      const real = await cli(
        'truncate-timeseries',
        '--entity-type',
        'dataset',
        '--aspect',
        'datasetprofile',
        '--older-than',
        '30d',
        '--force',
        '--json',
      );
      expect(real.code).toBe(0);
      const answer = JSON.parse(real.stdout) as { message: string; taskId: string };
      expect(answer.message).toBe(
        `Delete 6 out of 10 rows (60.00%). Reindexing the aspect without the deleted records. Task id: ${answer.taskId}.`,
      );

      // Embedded: done before the command exited; remote: background work of the server.
      const deadline = Date.now() + 10_000;
      let left: string;
      do {
        left = (await cli(...args, '--dry-run')).stdout;
      } while (!left.startsWith('Delete 0 out of 4 rows') && Date.now() < deadline && mc.server);
      expect(left).toMatch(/^Delete 0 out of 4 rows \(0\.00%\)\./);

      const badAge = await cli(...args.slice(0, -1), '30 days', '--dry-run');
      expect(badAge).toMatchObject({ code: 2 });
      expect(badAge.stderr).toBe(
        'metacatalog truncate-timeseries: --older-than must be a number followed by s, m, h, d or w (e.g. 30d), got "30 days" (see metacatalog truncate-timeseries --help)\n',
      );
      const badAspect = await cli(
        'truncate-timeseries',
        '--entity-type',
        'dataset',
        '--aspect',
        'datasetProperties',
        '--older-than',
        '1w',
        '--dry-run',
      );
      expect(badAspect.code).toBe(1);
      expect(badAspect.stderr).toMatch(/^metacatalog truncate-timeseries: invalid truncation request: \/aspect: .*datasetProperties.*\n$/);
    });
  });

  it('system-update --reindex rebuilds the search documents', async () => {
    await withMode(async (_mc, cli) => {
      expect((await cli('properties', 'upsert', '-f', EXAMPLE_YAML)).code).toBe(0);
      const text = await cli('system-update', '--reindex');
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^Rebuilt the search documents of \d+ entities\n$/);
      const json = JSON.parse((await cli('system-update', '--reindex', '--json')).stdout) as {
        processed: number;
        skipped: number;
        done: boolean;
      };
      expect(json).toMatchObject({ skipped: 0, done: true });
      expect(json.processed).toBeGreaterThanOrEqual(3);
      const nothing = await cli('system-update');
      expect(nothing).toMatchObject({
        code: 2,
        stderr: 'metacatalog system-update: nothing to do: pass --reindex (see metacatalog system-update --help)\n',
      });
    });
  });
});

describe('tokens across the two modes', () => {
  it('a token made in embedded mode works against serve on the same file; a user without privileges is refused', async () => {
    const { tempDir } = await import('./helpers');
    const db = `${tempDir()}/shared.db`;
    const made = await runCli(['tokens', 'create', '--name', 'for-serve', '--db', db]);
    expect(made.code).toBe(0);
    const adminToken = made.stdout.trim();
    const reader = await runCli(['tokens', 'create', '--name', 'reader', '--for', 'urn:li:corpuser:reader', '--db', db]);
    expect(reader.code).toBe(0);
    const server = await serveInProcess(db);
    try {
      const listed = await runCli(['properties', 'list', '--server', server.url, '--token', adminToken]);
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      const refused = await runCli(['index-sizes', '--server', server.url, '--token', reader.stdout.trim()]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^metacatalog index-sizes: .*GET_TIMESERIES_INDEX_SIZES.*\n$/);
      const forbiddenUpsert = await runCli([
        'properties',
        'upsert',
        '-f',
        EXAMPLE_YAML,
        '--server',
        server.url,
        '--token',
        reader.stdout.trim(),
        '--json',
      ]);
      expect(forbiddenUpsert.code).toBe(1);
      expect(JSON.parse(forbiddenUpsert.stderr).error.code).toBe('FORBIDDEN');
    } finally {
      await server.stop();
    }
  });
});

import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN, CLI, removeTempDirs, requireBuiltCli, ROOT, withCatalog } from './helpers';
import { MODES, withMode as withModeOf } from './modes';

vi.setConfig({ testTimeout: 120_000 });

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';

beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

describe.each(MODES)('metacatalog changes ($name)', (mode) => {
  const withMode = (work: Parameters<typeof withModeOf>[1]) => withModeOf(mode, work);

  it('prints the feed after a cursor, as text and as JSON lines, and follows new events written by another process', async () => {
    await withMode(async (mc, cli) => {
      // Written by this test process into the same SQLite file (the server, in remote mode, has it open too).
      await withCatalog(mc.db, async (catalog) => {
        await catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'one' });
        await catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'two' });
      });
      const json = await cli('changes', '--json');
      expect(json.code).toBe(0);
      const events = json.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; aspect: { name: string }; aspectName: string });
      const props = events.filter((e) => e.aspectName === 'datasetProperties');
      expect(props.map((e) => e.aspect.name)).toEqual(['one', 'two']);
      const text = await cli('changes', '--after', props[0]!.id);
      expect(text.code).toBe(0);
      // One line per event, starting with its id: the one after the cursor, not the cursor's own.
      const ids = text.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('  ')[0]);
      expect(ids).toContain(props[1]!.id);
      expect(ids).not.toContain(props[0]!.id);
      expect(text.stdout).toContain('UPSERT');
      expect((await cli('changes', '--after', 'x')).code).toBe(2);

      const child = spawn(process.execPath, [CLI, 'changes', '--follow', '--json', '--after', props[1]!.id, ...mc.args], {
        cwd: ROOT,
        env: mc.env,
      });
      let out = '';
      child.stdout.on('data', (d) => (out += String(d)));
      child.stdin.end();
      try {
        await new Promise((resolve) => setTimeout(resolve, 1500)); // the follower is waiting
        await withCatalog(mc.db, (catalog) => catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'three' }));
        for (let i = 0; i < 200 && !out.includes('"three"'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
        // Other records (e.g. the server's bootstrap token) may have their events too.
        const followed = out
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { aspectName: string; aspect: { name: string } | null });
        expect(followed.filter((e) => e.aspectName === 'datasetProperties').map((e) => e.aspect?.name)).toEqual(['three']);
      } finally {
        child.kill('SIGINT');
        await new Promise((resolve) => child.once('close', resolve));
      }
    });
  });
});

// The adapter built from one part passes the whole conformance suite, durability included: a fresh
// file per test, and `reopen` opens a new adapter over the same file.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AspectPut, StorageAdapter } from 'metacatalog';
import { runConformanceSuite } from 'metacatalog/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createJsonFileAdapter } from './index';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-json-lines-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const files = new WeakMap<StorageAdapter, string>();
let count = 0;

function adapterOver(filename: string, faultInjector?: (step: { entityIndex: number; urn: string }) => void): StorageAdapter {
  // Syncing every commit to disk is what a real deployment wants; the suite's thousands of commits do not need it.
  const adapter = createJsonFileAdapter({ filename, sync: false, ...(faultInjector ? { faultInjector } : {}) });
  files.set(adapter, filename);
  return adapter;
}

runConformanceSuite({
  name: 'json-lines store composed from parts',
  describe,
  it,
  skip: it.skip,
  expect,
  capabilities: { durable: true, changeToken: false, changeFeed: true, timeseriesInCommit: true },
  createAdapter: (options) => adapterOver(join(directory, `catalog-${++count}.jsonl`), options.faultInjector),
  reopen: (closed) => adapterOver(files.get(closed)!),
});

describe('the JSON-lines file', () => {
  const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
  const info = (name: string, version: number): AspectPut => {
    const stamp = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:ingest' };
    return { name: 'info', value: { name }, version, created: stamp, lastModified: stamp };
  };

  it('survives a restart; a line cut short by a crash never committed, and the file goes on after it', async () => {
    const filename = join(directory, 'restart.jsonl');
    const first = createJsonFileAdapter({ filename });
    await first.open();
    await first.commit({
      entities: [{ urn, entityType: 'dataset', expectVersion: 0, put: [info('orders', 1)] }],
      jobs: [{ type: 'reindex', payload: {} }],
    });
    await first.close();
    appendFileSync(filename, '[{"urn":"urn:li:dataset:(urn:li:dataPlatform:hive,torn,PROD)"'); // the process died mid-append

    const second = createJsonFileAdapter({ filename });
    await second.open();
    expect((await second.scanEntities({ limit: 10 })).map((e) => [e.urn, e.version, e.aspects.info?.value])).toEqual([
      [urn, 1, { name: 'orders' }],
    ]);
    expect((await second.listJobs()).map((j) => j.type)).toEqual(['reindex']);
    await second.commit({ entities: [{ urn, entityType: 'dataset', expectVersion: 1, put: [info('orders v2', 2)] }] });
    await second.close();
    expect(readFileSync(filename, 'utf8')).not.toContain('torn');

    const third = createJsonFileAdapter({ filename });
    await third.open();
    expect((await third.readEntities([urn])).map((e) => [e.version, e.aspects.info?.value])).toEqual([[2, { name: 'orders v2' }]]);
    await third.close();
  });
});

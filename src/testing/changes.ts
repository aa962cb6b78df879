import type { ChangeEvent, StorageAdapter } from '../adapter/types';
import { CatalogError } from '../errors';
import { ADMIN, CAROL, withCatalog } from './catalog-support';
import { aspect, createWrite, expectCode, expectRejects, faultAt, T0, URN, withAdapter } from './support';
import type { ConformanceHarness } from './types';

const DS = (n: number): string => `urn:li:dataset:(urn:li:dataPlatform:hive,changes.t${n},PROD)`;

async function errorOf(promise: Promise<unknown>): Promise<CatalogError | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error instanceof CatalogError ? error : undefined;
  }
}

/** Every event after `after`, page by page (the way a consumer resumes from the last id it saw). */
async function drain(adapter: StorageAdapter, after: string | undefined, pageSize: number): Promise<ChangeEvent[]> {
  const out: ChangeEvent[] = [];
  for (;;) {
    const page = await adapter.readChanges!({ after, limit: pageSize });
    out.push(...page.events);
    if (page.events.length < pageSize) return out;
    after = page.events.at(-1)!.id;
  }
}

/** The change feed and aspect history (docs/changes.md): events committed with their change, in commit order. */
export function registerChangeTests(harness: ConformanceHarness): void {
  const { describe, expect } = harness;
  // Adapters without the change feed (capabilities.changeFeed false) have these tests reported skipped.
  const it = harness.capabilities.changeFeed ? harness.it : harness.skip;

  describe('change feed (adapter)', () => {
    it('stores the events of a commit with it, ids increasing in commit order; a failed commit leaves none', async () => {
      await withAdapter(harness, async (adapter) => {
        const event = (urn: string, name: string) => ({
          entityUrn: urn,
          entityType: 'dataset',
          aspectName: name,
          changeType: 'UPSERT' as const,
          aspect: { name },
          previousAspectValue: null,
          created: { time: T0, actor: 'urn:li:corpuser:x' },
        });
        await adapter.commit({
          entities: [createWrite(URN.a, [aspect('info', { name: 'a' })])],
          events: [event(URN.a, 'info'), event(URN.a, 'status')],
        });
        await expectCode(
          expect,
          adapter.commit({ entities: [createWrite(URN.a, [aspect('info', { name: 'again' })])], events: [event(URN.a, 'lost')] }),
          'CONFLICT',
        );
        await adapter.commit({ entities: [createWrite(URN.b, [aspect('info', { name: 'b' })])], events: [event(URN.b, 'info')] });
        const page = await adapter.readChanges!({ limit: 10 });
        expect(page.events.map((e) => `${e.entityUrn}/${e.aspectName}`)).toEqual([`${URN.a}/info`, `${URN.a}/status`, `${URN.b}/info`]);
        const ids = page.events.map((e) => BigInt(e.id));
        expect(ids[0]! < ids[1]! && ids[1]! < ids[2]!).toBe(true);
        expect(page.events[0]!.aspect).toEqual({ name: 'info' });
        expect(page.events[0]!.previousAspectValue).toBe(null);
        expect(page.events[0]!.created).toEqual({ time: T0, actor: 'urn:li:corpuser:x' });
        const filtered = await adapter.readChanges!({ limit: 10, aspects: ['status'] });
        expect(filtered.events.map((e) => e.aspectName)).toEqual(['status']);
        expect(filtered.scannedId).toBe(page.events[2]!.id);
        expect((await adapter.readChanges!({ after: page.events[1]!.id, limit: 10 })).events.map((e) => e.id)).toEqual([
          page.events[2]!.id,
        ]);
      });
    });

    it('a fault inside the transaction leaves neither the change nor its events nor kept versions', async () => {
      const fault = faultAt(0);
      await withAdapter(
        harness,
        async (adapter) => {
          fault.arm();
          await expectRejects(
            expect,
            adapter.commit({
              entities: [createWrite(URN.a, [aspect('info', { name: 'a' })])],
              events: [
                {
                  entityUrn: URN.a,
                  entityType: 'dataset',
                  aspectName: 'info',
                  changeType: 'UPSERT',
                  aspect: { name: 'a' },
                  previousAspectValue: null,
                  created: { time: T0, actor: 'x' },
                },
              ],
              aspectVersions: [{ urn: URN.a, entityType: 'dataset', aspect: aspect('info', { name: 'old' }) }],
            }),
          );
          expect((await adapter.readChanges!({ limit: 10 })).events).toEqual([]);
          expect(await adapter.readAspectVersions!({ urn: URN.a, aspectName: 'info', limit: 10 })).toEqual([]);
        },
        fault.injector,
      );
    });
  });

  describe('change feed and history (catalog)', () => {
    it('derives one event per changed aspect, keeps earlier versions, numbers them like DataHub', async () => {
      await withCatalog(harness, async ({ catalog, clock }) => {
        const urn = DS(1);
        await catalog.entities.upsertAspect(ADMIN, urn, 'datasetProperties', { name: 'one' });
        clock.advance(1000);
        await catalog.entities.upsertAspect(ADMIN, urn, 'datasetProperties', { name: 'two' });
        clock.advance(1000);
        await catalog.entities.upsertAspect(ADMIN, urn, 'datasetProperties', { name: 'three' });
        const { events, next } = await catalog.changes.read(ADMIN, { aspects: ['datasetProperties'] });
        expect(
          events.map((e) => [
            e.changeType,
            (e.aspect as { name: string }).name,
            (e.previousAspectValue as { name: string } | null)?.name ?? null,
          ]),
        ).toEqual([
          ['UPSERT', 'one', null],
          ['UPSERT', 'two', 'one'],
          ['UPSERT', 'three', 'two'],
        ]);
        expect(events[2]!.created).toEqual({ time: T0 + 2000, actor: ADMIN });
        expect(next).toBe(events[2]!.id);
        const history = await catalog.entities.history(ADMIN, urn, 'datasetProperties', { limit: 5 });
        expect(history.map((v) => [v.version, (v.value as { name: string }).name])).toEqual([
          [3, 'three'],
          [2, 'two'],
          [1, 'one'],
        ]);
        expect(history[1]!.lastModified).toEqual({ time: T0 + 1000, actor: ADMIN });
        expect((await catalog.entities.history(ADMIN, urn, 'datasetProperties', { before: 3, limit: 1 })).map((v) => v.version)).toEqual([
          2,
        ]);
        expect((await catalog.entities.aspectVersion(ADMIN, urn, 'datasetProperties', 0))?.value).toEqual({ name: 'three' });
        // DataHub's numbering: 0 the latest, N >= 1 the N-th value written.
        expect((await catalog.entities.aspectVersion(ADMIN, urn, 'datasetProperties', 1))?.value).toEqual({ name: 'one' });
        expect((await catalog.entities.aspectVersion(ADMIN, urn, 'datasetProperties', 2))?.value).toEqual({ name: 'two' });
        expect((await catalog.entities.aspectVersion(ADMIN, urn, 'datasetProperties', 3))?.value).toEqual({ name: 'three' });
        expect(await catalog.entities.aspectVersion(ADMIN, urn, 'datasetProperties', 4)).toBeUndefined();

        await catalog.entities.delete(ADMIN, urn, { hard: true });
        const after = await catalog.changes.read(ADMIN, { after: next });
        expect(after.events.length).toBeGreaterThan(0);
        expect(after.events.every((e) => e.changeType === 'DELETE' && e.aspect === null && e.entityUrn === urn)).toBe(true);
        expect(after.events.find((e) => e.aspectName === 'datasetProperties')?.previousAspectValue).toEqual({ name: 'three' });
        expect(await catalog.entities.history(ADMIN, urn, 'datasetProperties')).toEqual([]);
      });
    });

    it('needs VIEW_CHANGE_FEED; refuses malformed cursors; never carries a token secret or hash', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        await expectCode(expect, catalog.changes.read(CAROL, {}), 'FORBIDDEN');
        for (const bad of ['abc', '-1', '1.5', '01'])
          await expectCode(expect, catalog.changes.read(ADMIN, { after: bad }), 'INVALID_INPUT');
        const created = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_DAY', name: 'feed' });
        const { events } = await catalog.changes.read(ADMIN, {});
        const text = JSON.stringify(events);
        expect(events.length).toBeGreaterThan(0);
        expect(text.includes(created.accessToken)).toBe(false);
        expect(text.includes('tokenHash') || text.includes('tokenSalt')).toBe(false);
      });
    });

    it('a consumer resuming from the last id it saw gets every later event exactly once, in commit order', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const seen: ChangeEvent[] = [];
        let cursor: string | undefined;
        const consume = async (): Promise<void> => {
          for (;;) {
            const page = await catalog.changes.read(ADMIN, { after: cursor, limit: 3 });
            seen.push(...page.events);
            cursor = page.next;
            if (page.events.length < 3) return;
          }
        };
        for (let i = 0; i < 12; i++) {
          await catalog.entities.upsertAspect(ADMIN, DS(i % 4), 'datasetProperties', { name: `n${i}` });
          if (i % 5 === 0) await consume(); // the consumer stops and resumes between writes
        }
        await consume();
        const all = await catalog.changes.read(ADMIN, { limit: 1000 });
        expect(seen.map((e) => e.id)).toEqual(all.events.map((e) => e.id));
        expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
      });
    });

    it('follow yields committed events, waits for new ones, and ends when its signal aborts', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        await catalog.entities.upsertAspect(ADMIN, DS(1), 'datasetProperties', { name: 'before' });
        const controller = new AbortController();
        const got: ChangeEvent[] = [];
        const following = (async () => {
          for await (const event of catalog.changes.follow(ADMIN, { signal: controller.signal })) {
            got.push(event);
            if (got.length === 3) controller.abort();
          }
        })();
        await catalog.entities.upsertAspect(ADMIN, DS(2), 'datasetProperties', { name: 'during' });
        await catalog.entities.upsertAspect(ADMIN, DS(3), 'datasetProperties', { name: 'later' });
        // A generous bound: proves the follower is woken, not that it is fast.
        await Promise.race([
          following,
          new Promise((_, reject) => setTimeout(() => reject(new Error('follow did not deliver within 10 s')), 10_000)),
        ]);
        expect(got.map((e) => (e.aspect as { name: string }).name)).toEqual(['before', 'during', 'later']);
        // An aborted follower ends even while it waits for events.
        const idle = new AbortController();
        const waiting = (async () => {
          for await (const event of catalog.changes.follow(ADMIN, { after: got[2]!.id, signal: idle.signal })) void event;
        })();
        setTimeout(() => idle.abort(), 50);
        await waiting;
      });
    });

    it('retention removes old events and versions; a cursor older than what is kept names the oldest one available', async () => {
      await withCatalog(harness, async ({ catalog, adapter }) => {
        for (let i = 0; i < 6; i++) await catalog.entities.upsertAspect(ADMIN, DS(1), 'datasetProperties', { name: `v${i}` });
        const all = (await catalog.changes.read(ADMIN, {})).events;
        const went = await adapter.pruneChanges!({ keepEvents: 2, keepVersions: 2, limit: 1000 });
        expect(went.events).toBe(all.length - 2);
        expect(went.versions).toBe(3);
        const kept = (await catalog.changes.read(ADMIN, {})).events.map((e) => e.id);
        expect(kept).toEqual(all.slice(-2).map((e) => e.id));
        const error = await errorOf(catalog.changes.read(ADMIN, { after: all[0]!.id }));
        expect(error?.code).toBe('INVALID_INPUT');
        const oldestCursor = all.at(-3)!.id;
        expect(error?.message.includes(`"${oldestCursor}"`)).toBe(true);
        expect((await catalog.changes.read(ADMIN, { after: oldestCursor })).events.map((e) => e.id)).toEqual(kept);
        expect((await catalog.entities.history(ADMIN, DS(1), 'datasetProperties')).map((v) => v.version)).toEqual([6, 5, 4]);
      });
    });

    it('structured property value history: each value, who set it, when, under which definition version', async () => {
      await withCatalog(harness, async ({ catalog, clock }) => {
        const tier = (
          await catalog.properties.create(ADMIN, { qualifiedName: 'changes.tier', valueType: 'string', entityTypes: ['dataset'] })
        ).urn;
        const team = (
          await catalog.properties.create(ADMIN, { qualifiedName: 'changes.team', valueType: 'string', entityTypes: ['dataset'] })
        ).urn;
        const urn = DS(7);
        await catalog.properties.upsertValues(ADMIN, urn, { properties: [{ propertyUrn: tier, values: [{ string: 'gold' }] }] });
        clock.advance(1000);
        await catalog.properties.upsertValues(ADMIN, urn, {
          properties: [
            { propertyUrn: tier, values: [{ string: 'gold' }] },
            { propertyUrn: team, values: [{ string: 'core' }] },
          ],
        });
        clock.advance(1000);
        await catalog.properties.upsertValues(ADMIN, urn, { properties: [{ propertyUrn: tier, values: [{ string: 'silver' }] }] });
        const all = await catalog.properties.valueHistory(ADMIN, urn);
        expect(all.map((c) => [c.propertyUrn, c.values.map((v) => ('string' in v ? v.string : v.double)), c.current])).toEqual([
          [team, [], true],
          [tier, ['silver'], true],
          [team, ['core'], false],
          [tier, ['gold'], false],
        ]);
        const tierOnly = await catalog.properties.valueHistory(ADMIN, urn, tier);
        expect(tierOnly.map((c) => c.setBy.time)).toEqual([T0 + 2000, T0]);
        expect(tierOnly[0]!.setBy.actor).toBe(ADMIN);
        expect(tierOnly.every((c) => c.definitionVersion === null)).toBe(true);
        await expectCode(expect, catalog.properties.valueHistory(ADMIN, urn, 'not-a-urn'), 'INVALID_INPUT');
      });
    });

    it('a finished timeseries truncation is one TRUNCATE event on the indexed entity type and aspect', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const rows = Array.from({ length: 10 }, (_, i) => ({ timestampMillis: T0 + i, rowCount: i }));
        await catalog.timeseries.append(ADMIN, DS(9), 'datasetProfile', rows);
        const before = await catalog.changes.read(ADMIN, {});
        await catalog.timeseries.truncate(ADMIN, { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: T0 + 4, dryRun: false });
        await catalog.settle();
        const { events } = await catalog.changes.read(ADMIN, { after: before.next });
        const truncations = events.filter((e) => e.changeType === 'TRUNCATE');
        expect(truncations).toHaveLength(1);
        expect([
          truncations[0]!.entityType,
          truncations[0]!.aspectName,
          (truncations[0]!.aspect as { rowsDeleted: number }).rowsDeleted,
        ]).toEqual(['dataset', 'datasetProfile', 5]);
        expect(truncations[0]!.created.actor).toBe(ADMIN);
      });
    });

    it('the retention job enforces createCatalog({ history, changes }) in the background', async () => {
      await withCatalog(
        harness,
        async ({ catalog }) => {
          for (let i = 0; i < 5; i++) await catalog.entities.upsertAspect(ADMIN, DS(2), 'datasetProperties', { name: `v${i}` });
          // The job is queued by a timer every intervalMs; settle() runs it.
          for (let i = 0; i < 100 && !(await catalog.listJobs()).some((j) => j.type === 'changes.retention'); i++)
            await new Promise((resolve) => setTimeout(resolve, 10));
          await catalog.settle();
          expect((await catalog.changes.read(ADMIN, {})).events).toHaveLength(2);
          expect((await catalog.entities.history(ADMIN, DS(2), 'datasetProperties')).map((v) => v.version)).toEqual([5, 4]);
        },
        { changes: { keepEvents: 2, intervalMs: 20 }, history: { keepVersions: 1 } },
      );
    });

    it('events and versions can be turned off', async () => {
      await withCatalog(
        harness,
        async ({ catalog }) => {
          await catalog.entities.upsertAspect(ADMIN, DS(1), 'datasetProperties', { name: 'a' });
          await catalog.entities.upsertAspect(ADMIN, DS(1), 'datasetProperties', { name: 'b' });
          expect((await catalog.changes.read(ADMIN, {})).events).toEqual([]);
          expect((await catalog.entities.history(ADMIN, DS(1), 'datasetProperties')).map((v) => v.version)).toEqual([2]);
        },
        { changes: { enabled: false }, history: { enabled: false } },
      );
    });
  });

  const { reopen } = harness;
  describe('change feed with concurrent writers on one store', () => {
    it('two adapters commit at once; a consumer reading meanwhile sees ids strictly increasing with none missing', async () => {
      await withAdapter(harness, async (first) => {
        const second = reopen && first.capabilities.durable ? await reopen(first) : first;
        if (second !== first) await second.open();
        try {
          const writers = [first, second].map(async (adapter, w) => {
            for (let i = 0; i < 15; i++) {
              const urn = DS(100 + w * 100 + i);
              await adapter.commit({
                entities: [createWrite(urn, [aspect('info', { name: urn })])],
                events: [0, 1].map((k) => ({
                  entityUrn: urn,
                  entityType: 'dataset',
                  aspectName: `a${k}`,
                  changeType: 'UPSERT' as const,
                  aspect: { k },
                  previousAspectValue: null,
                  created: { time: T0, actor: `w${w}` },
                })),
              });
            }
          });
          const seen: ChangeEvent[] = [];
          let cursor: string | undefined;
          let done = false;
          const all = Promise.all(writers).finally(() => (done = true));
          while (!done) {
            const page = await first.readChanges!({ after: cursor, limit: 7 });
            seen.push(...page.events);
            if (page.events.length) cursor = page.events.at(-1)!.id;
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          await all;
          seen.push(...(await drain(first, cursor, 7)));
          const ids = seen.map((e) => BigInt(e.id));
          expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
          const final = await drain(second, undefined, 1000);
          expect(seen.map((e) => e.id)).toEqual(final.map((e) => e.id));
          expect(final).toHaveLength(60);
          // Both events of one commit are adjacent: a commit's events are one block.
          for (let i = 0; i < final.length; i += 2) expect(final[i]!.entityUrn).toBe(final[i + 1]!.entityUrn);
        } finally {
          if (second !== first) await second.close();
        }
      });
    });
  });
}

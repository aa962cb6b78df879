import { describe, expect, it } from 'vitest';
import type { JsonObject, NewChangeEvent } from '../../../src/adapter/types';
import { ChangeStore } from '../../../adapters/memory/changes';
import { UndoLog } from '../../../adapters/memory/undo-log';

function event(urn: string, systemMetadata: NewChangeEvent['systemMetadata']): NewChangeEvent {
  return {
    entityUrn: urn,
    entityType: 'dataset',
    aspectName: 'datasetProperties',
    changeType: 'UPSERT',
    aspect: { name: urn },
    previousAspectValue: null,
    created: { time: 1, actor: 'urn:li:corpuser:a' },
    ...(systemMetadata ? { systemMetadata } : {}),
  };
}

describe('ChangeStore: the system metadata of events', () => {
  it('reads back each event with its own system metadata when consecutive events repeat or change it', () => {
    const store = new ChangeStore();
    const metadata: Array<JsonObject | undefined> = [
      { runId: 'r1' },
      { runId: 'r1' },
      { runId: 'r1' },
      { runId: 'r2' },
      undefined,
      { runId: 'r1', x: [1] },
      { runId: 'r1' },
    ];
    const shared = { runId: 'r1' };
    // One object written, repeated, then changed in place: a copy compared must not follow it.
    store.append([event('u0', shared), event('u1', shared)], new UndoLog());
    shared.runId = 'changed';
    store.append([event('u2', shared)], new UndoLog());
    store.append(
      metadata.map((m, i) => event(`v${i}`, m)),
      new UndoLog(),
    );
    const read = store.readChanges({ limit: 100 }).events.map((e) => [e.entityUrn, e.systemMetadata]);
    expect(read).toEqual([
      ['u0', { runId: 'r1' }],
      ['u1', { runId: 'r1' }],
      ['u2', { runId: 'changed' }],
      ...metadata.map((m, i) => [`v${i}`, m]),
    ]);
  });
});

describe('ChangeStore: events as stored', () => {
  it('reads back every field of an event as appended, each read a copy of its own', () => {
    const store = new ChangeStore();
    const stamp = { time: 7, actor: 'urn:li:corpuser:a' };
    const aspect: JsonObject = { name: 'orders', tags: ['a', 'b'] };
    const previous: JsonObject = { name: 'old' };
    store.append(
      [
        { ...event('u1', { runId: 'r1' }), aspect, previousAspectValue: previous, created: stamp },
        { ...event('u2', undefined), changeType: 'DELETE', aspect: null, previousAspectValue: aspect, created: stamp },
      ],
      new UndoLog(),
    );
    // Changing what was appended changes nothing stored.
    aspect.name = 'changed';
    stamp.time = 8;
    const [first, second] = store.readChanges({ limit: 10 }).events;
    expect(first).toEqual({
      id: '1',
      entityUrn: 'u1',
      entityType: 'dataset',
      aspectName: 'datasetProperties',
      changeType: 'UPSERT',
      aspect: { name: 'orders', tags: ['a', 'b'] },
      previousAspectValue: { name: 'old' },
      created: { time: 7, actor: 'urn:li:corpuser:a' },
      systemMetadata: { runId: 'r1' },
    });
    expect(second).toEqual({
      id: '2',
      entityUrn: 'u2',
      entityType: 'dataset',
      aspectName: 'datasetProperties',
      changeType: 'DELETE',
      aspect: null,
      previousAspectValue: { name: 'orders', tags: ['a', 'b'] },
      created: { time: 7, actor: 'urn:li:corpuser:a' },
    });
    expect(Object.keys(second!)).not.toContain('systemMetadata');
    // Changing what was read changes nothing stored either.
    first!.created.time = 9;
    (first!.aspect as JsonObject).name = 'mine';
    expect(store.readChanges({ limit: 1 }).events[0]).toMatchObject({ aspect: { name: 'orders' }, created: { time: 7 } });
  });

  it('refuses an event whose value JSON cannot hold with INVALID_INPUT and keeps none of the call', () => {
    const store = new ChangeStore();
    store.append([event('u0', undefined)], new UndoLog());
    const bad = { ...event('u2', undefined), previousAspectValue: { when: new Date(0) } as unknown as JsonObject };
    expect(() => store.append([event('u1', undefined), bad], new UndoLog())).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    const page = store.readChanges({ limit: 10 });
    expect(page.events.map((e) => e.entityUrn)).toEqual(['u0']);
    expect(page.lastId).toBe('1');
  });
});

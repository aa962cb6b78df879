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

import type {
  AspectPut,
  EntityWrite,
  JsonObject,
  SearchDocument,
  SearchDocumentProperty,
  StorageAdapter,
  StoredEntity,
  TimeseriesIndexRef,
} from '../adapter/types';
import type { FaultInjector, ConformanceHarness, ConformanceExpect } from './types';

/** A fixed instant so stamps and job times are predictable (2023-11-14T22:13:20Z). */
export const T0 = 1_700_000_000_000;
const ACTOR = 'urn:li:corpuser:ingest';

/** URNs of the suite. Chosen so that code-unit order differs from locale order (`B` < `a`). */
export const URN = {
  a: 'urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)',
  b: 'urn:li:dataset:(urn:li:dataPlatform:hive,b,PROD)',
  c: 'urn:li:dataset:(urn:li:dataPlatform:hive,c,PROD)',
  upperB: 'urn:li:dataset:(urn:li:dataPlatform:hive,B,PROD)',
  unknown: 'urn:li:dataset:(urn:li:dataPlatform:hive,never_written,PROD)',
  alice: 'urn:li:corpuser:alice',
  bob: 'urn:li:corpuser:bob',
} as const;

export const PROFILE_INDEX: TimeseriesIndexRef = {
  indexName: 'dataset_datasetprofileaspect_v1',
  entityType: 'dataset',
  aspect: 'datasetProfile',
};
export const OPERATION_INDEX: TimeseriesIndexRef = {
  indexName: 'dataset_operationaspect_v1',
  entityType: 'dataset',
  aspect: 'operation',
};

function entityTypeOfUrn(urn: string): string {
  return urn.split(':')[2] ?? '';
}

/** An aspect as the domain would hand it to the adapter: versioned and stamped. */
export function aspect(name: string, value: JsonObject, version = 1, time = T0): AspectPut {
  return {
    name,
    value,
    version,
    created: { time: T0, actor: ACTOR },
    lastModified: { time, actor: ACTOR },
  };
}

/** Writes a new entity (expectVersion 0) with the given aspects. */
export function createWrite(urn: string, aspects: AspectPut[], extra: Partial<EntityWrite> = {}): EntityWrite {
  return { urn, entityType: entityTypeOfUrn(urn), expectVersion: 0, put: aspects, ...extra };
}

/** Creates entities, one commit each, with a `datasetProperties`-like aspect named after the URN. */
export async function seedEntities(
  adapter: StorageAdapter,
  urns: readonly string[],
  aspectNames: readonly string[] = ['info'],
): Promise<void> {
  for (const urn of urns) {
    await adapter.commit({
      entities: [
        createWrite(
          urn,
          aspectNames.map((name) => aspect(name, { name: `${name} of ${urn}` })),
        ),
      ],
    });
  }
}

export function searchDocument(urn: string, properties: SearchDocumentProperty[], removed = false): SearchDocument {
  return {
    urn,
    entityType: entityTypeOfUrn(urn),
    removed,
    text: { urnKey: urn.split(':').slice(3).join(':') },
    fields: {},
    properties,
  };
}

export function urnsOf(entities: readonly StoredEntity[]): string[] {
  return entities.map((e) => e.urn);
}

/** Code-unit order, the order the contract fixes for URNs. */
export function byCodeUnits(values: readonly string[]): string[] {
  return [...values].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
}

/** A fresh, opened adapter for one test, closed afterwards whatever happens. */
export async function withAdapter(
  harness: ConformanceHarness,
  test: (adapter: StorageAdapter) => Promise<void>,
  faultInjector?: FaultInjector,
): Promise<void> {
  const adapter = await harness.createAdapter(faultInjector ? { faultInjector } : {});
  try {
    await adapter.open();
    await test(adapter);
  } finally {
    await adapter.close();
  }
}

/** A fault injector that throws at one entity index of a batch once armed, and records every step. */
export interface Fault {
  readonly injector: FaultInjector;
  readonly steps: Array<{ entityIndex: number; urn: string }>;
  arm(): void;
  disarm(): void;
}

export const INJECTED_FAULT = 'conformance: injected fault';

export function faultAt(entityIndex: number): Fault {
  let armed = false;
  const steps: Array<{ entityIndex: number; urn: string }> = [];
  return {
    steps,
    arm: () => {
      armed = true;
      steps.length = 0;
    },
    disarm: () => {
      armed = false;
    },
    injector: (step) => {
      steps.push({ entityIndex: step.entityIndex, urn: step.urn });
      if (armed && step.entityIndex === entityIndex) throw new Error(INJECTED_FAULT);
    },
  };
}

const RESOLVED = 'resolved without an error';

/** What a promise settled with, as a comparable string: the error `code`, or why there is none. */
export async function outcomeCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return RESOLVED;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string') return code;
    return `an error without a code: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Asserts that the promise rejects with a `CatalogError` of this code (never by message text). */
export async function expectCode(expect: ConformanceExpect, promise: Promise<unknown>, code: string): Promise<void> {
  expect(await outcomeCode(promise)).toBe(code);
}

/** Asserts that the promise rejects, with anything. */
export async function expectRejects(expect: ConformanceExpect, promise: Promise<unknown>): Promise<void> {
  expect(await outcomeCode(promise)).not.toBe(RESOLVED);
}

/** Error `details` of a rejection (empty when there are none). */
export async function rejectionDetails(promise: Promise<unknown>): Promise<{ code: unknown; paths: string[] }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: unknown; details?: unknown };
    const details = Array.isArray(e.details) ? (e.details as Array<{ path?: unknown }>) : [];
    return { code: e.code, paths: details.map((d) => String(d.path)) };
  }
  return { code: RESOLVED, paths: [] };
}

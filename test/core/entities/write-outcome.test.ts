import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog } from '../../../src/index';

/**
 * A write's outcome keeps its lazy `before` on its class, not as a getter of an object literal: such a
 * getter is a new closure per write, which gives every outcome a hidden class of its own (made in V8's
 * old generation and pointing at the write's objects), and each young-generation collection then kept
 * every write's objects alive until a full collection. The lint rule in eslint.config.js keeps the
 * pattern out of src/ and adapters/; this checks the outcome itself.
 */

const ADMIN = 'urn:li:corpuser:admin';
const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,outcome,PROD)';

describe("a write's outcome", () => {
  it('shares one prototype across writes, with no accessor of its own, and still answers `before`', async () => {
    const catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], jobs: { background: false } });
    const { pipeline } = catalog.entities;
    const write = (name: string) =>
      pipeline.write(ADMIN, [{ op: 'upsert', urn: URN, aspect: 'datasetProperties', value: { name }, path: '' }], { message: 'outcome' });
    const first = await write('one');
    const second = await write('two');

    expect(Object.getPrototypeOf(first)).toBe(Object.getPrototypeOf(second));
    expect(Object.getPrototypeOf(first)).not.toBe(Object.prototype);
    for (const outcome of [first, second])
      for (const key of Reflect.ownKeys(outcome)) {
        const descriptor = Object.getOwnPropertyDescriptor(outcome, key)!;
        expect(descriptor.get, `own accessor ${String(key)}`).toBeUndefined();
      }

    expect(first.before.get(URN)).toBeUndefined();
    expect(second.before.get(URN)?.aspects.datasetProperties?.value).toEqual({ name: 'one' });
    expect(second.after.get(URN)?.aspects.datasetProperties?.value).toEqual({ name: 'two' });
    // Made once, then the same map.
    expect(second.before).toBe(second.before);
    await catalog.close();
  });
});

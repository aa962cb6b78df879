// `metacatalog/adapters/memory`: loads the adapter (and lunr) once, naming the peer when it is missing.
import { loadWithPeer } from '../../src/adapter/peer';

const implementation = await loadWithPeer('metacatalog/adapters/memory', 'lunr', () => import('./index'));

export const createMemoryAdapter = implementation.createMemoryAdapter;
export type { MemoryAdapterOptions } from './index';

// `metacatalog/adapters/postgres`: loads the adapter (and pg) once, naming the peer when it is missing.
import { loadWithPeer } from '../../src/adapter/peer';

const implementation = await loadWithPeer('metacatalog/adapters/postgres', 'pg', () => import('./index'));

export const createPostgresAdapter = implementation.createPostgresAdapter;
export type { PostgresAdapterOptions, PostgresAdapterSettings, PostgresConnection, ReplicaOption, ReplicaSettings } from './index';

// `metacatalog/adapters/sqlite`: loads the adapter (and better-sqlite3) once, naming the peer when it is missing.
import { loadWithPeer } from '../../src/adapter/peer';

const implementation = await loadWithPeer('metacatalog/adapters/sqlite', 'better-sqlite3', () => import('./index'));

export const createSqliteAdapter = implementation.createSqliteAdapter;
export const backupSqliteDatabase = implementation.backupSqliteDatabase;
export type { SqliteAdapterOptions, SqliteBackupResult, SqliteDurability } from './index';

// An entity store kept in one JSON-lines file: each commit appends one line holding what it changed,
// synced to disk before the commit returns; opening the file replays the lines. That is the whole
// storage engine: `composeAdapter` (from metacatalog) builds search, jobs, timeseries and the change
// feed on top of it, as records written by this store's own commit.
import { closeSync, existsSync, fstatSync, fsyncSync, openSync, readSync, truncateSync, writeSync } from 'node:fs';
import {
  CatalogError,
  type AspectPut,
  type EntityScanRequest,
  type EntityStore,
  type FaultInjectionOptions,
  type StoredAspect,
  type StoredEntity,
  type WriteBatch,
} from 'metacatalog';

export interface JsonLinesStoreOptions extends FaultInjectionOptions {
  /** The log file; created (mode 0600) when missing. */
  filename: string;
  /** Sync every commit to disk before it returns (default true). False keeps writes through a crash of the process only. */
  sync?: boolean;
}

/** One entity in memory: its aspects as JSON text, parsed again for every read (callers never share state). */
interface Row {
  entityType: string;
  version: number;
  aspects: Map<string, string>;
}

/** What one commit changed, as the log line holds it. */
interface LineEntry {
  urn: string;
  entityType: string;
  version: number;
  deleteEntity?: true;
  put?: AspectPut[];
  delete?: string[];
}

export function createJsonLinesStore(options: JsonLinesStoreOptions): EntityStore {
  const { filename, faultInjector } = options;
  const sync = options.sync ?? true;
  const rows = new Map<string, Row>();
  /** URNs in code-unit order, for scans. */
  const order: string[] = [];
  let fd: number | undefined;
  /** Bytes of the file already applied: other stores over the same file append too, and are read before every call. */
  let applied = 0;
  let closed = false;

  function file(): number {
    if (closed) throw new Error(`json-lines store ${filename}: closed`);
    if (fd === undefined) throw new Error(`json-lines store ${filename}: call open() first`);
    return fd;
  }

  /** Applies the lines appended since the last call (by this store or another one over the file). */
  function catchUp(): void {
    const handle = file();
    const size = fstatSync(handle).size;
    if (size <= applied) return;
    const bytes = Buffer.alloc(size - applied);
    readSync(handle, bytes, 0, bytes.length, applied);
    const end = bytes.lastIndexOf(0x0a);
    if (end < 0) return; // a line still being written
    for (const line of bytes.subarray(0, end).toString('utf8').split('\n')) if (line) applyLine(JSON.parse(line) as LineEntry[]);
    applied += end + 1;
  }

  function applyLine(entries: readonly LineEntry[]): void {
    for (const entry of entries) {
      if (entry.deleteEntity) {
        if (rows.delete(entry.urn)) order.splice(position(entry.urn), 1);
        continue;
      }
      let row = rows.get(entry.urn);
      if (!row) {
        row = { entityType: entry.entityType, version: 0, aspects: new Map() };
        rows.set(entry.urn, row);
        order.splice(position(entry.urn), 0, entry.urn);
      }
      row.version = entry.version;
      for (const name of entry.delete ?? []) row.aspects.delete(name);
      for (const aspect of entry.put ?? []) row.aspects.set(aspect.name, JSON.stringify(aspect));
    }
  }

  /** Where `urn` is, or would go, in `order` (binary search; code-unit comparison). */
  function position(urn: string): number {
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order[mid]! < urn) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  function entityOf(urn: string, row: Row, aspectNames?: readonly string[]): StoredEntity {
    const aspects: Record<string, StoredAspect> = {};
    for (const [name, text] of row.aspects)
      if (!aspectNames || aspectNames.includes(name)) aspects[name] = JSON.parse(text) as StoredAspect;
    return { urn, entityType: row.entityType, version: row.version, aspects };
  }

  return {
    name: 'json-lines',
    capabilities: { durable: true, changeToken: false },

    async open() {
      if (closed) throw new Error(`json-lines store ${filename}: closed`);
      if (fd !== undefined) return;
      const created = !existsSync(filename);
      fd = openSync(filename, 'a+', 0o600);
      if (created && sync) fsyncSync(fd);
      // A crash in the middle of an append leaves a line without its newline: it never committed.
      const size = fstatSync(fd).size;
      const bytes = Buffer.alloc(size);
      readSync(fd, bytes, 0, size, 0);
      const end = bytes.lastIndexOf(0x0a) + 1;
      if (end < size) truncateSync(filename, end);
      catchUp();
    },

    async close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      closed = true;
    },

    async readEntities(urns, aspectNames) {
      catchUp();
      const out: StoredEntity[] = [];
      for (const urn of new Set(urns)) {
        const row = rows.get(urn);
        if (row) out.push(entityOf(urn, row, aspectNames));
      }
      return out;
    },

    async scanEntities(request: EntityScanRequest) {
      catchUp();
      const out: StoredEntity[] = [];
      let i = request.afterUrn === undefined ? 0 : position(request.afterUrn);
      if (request.afterUrn !== undefined && order[i] === request.afterUrn) i++;
      for (; i < order.length && out.length < request.limit; i++) {
        const urn = order[i]!;
        const row = rows.get(urn)!;
        if (request.entityType !== undefined && row.entityType !== request.entityType) continue;
        if (request.requireAspect !== undefined && !row.aspects.has(request.requireAspect)) continue;
        out.push(entityOf(urn, row, request.aspectNames));
      }
      return out;
    },

    // Synchronous from the first read to the last write: no other call of this process runs in between,
    // so the version checks and the append are one step.
    async commit(batch: WriteBatch) {
      catchUp();
      const versions = new Map<string, number>(); // as the batch goes: a URN written twice sees its first write
      const entries: LineEntry[] = [];
      (batch.entities ?? []).forEach((write, entityIndex) => {
        const found = versions.get(write.urn) ?? rows.get(write.urn)?.version ?? 0;
        if (found !== write.expectVersion) {
          throw new CatalogError('CONFLICT', `${write.urn}: expected version ${write.expectVersion}, found ${found}`);
        }
        const version = write.deleteEntity ? 0 : found + 1;
        versions.set(write.urn, version);
        entries.push(
          write.deleteEntity
            ? { urn: write.urn, entityType: write.entityType, version, deleteEntity: true }
            : { urn: write.urn, entityType: write.entityType, version, put: write.put ?? [], delete: write.delete ?? [] },
        );
        faultInjector?.({ entityIndex, urn: write.urn });
      });
      if (!entries.length) return;
      const line = Buffer.from(`${JSON.stringify(entries)}\n`, 'utf8');
      const handle = file();
      writeSync(handle, line); // the file is open for appending
      if (sync) fsyncSync(handle);
      applyLine(entries);
      applied += line.length;
    },
  };
}

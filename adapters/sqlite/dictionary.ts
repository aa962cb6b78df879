import type { SqliteHandle } from './statements';

/**
 * The dictionary: every string the compact layout stores as a number (aspect names, entity types,
 * actors, and the URNs and keys that packed values refer to, adapters/sqlite/packing.ts) once, in
 * `dictionary (id, text)`. Rows are never deleted, so an id, once committed, means the same text for
 * every connection forever. Each handle caches both directions, bounded: past `MAX_CACHED` entries a
 * cache starts over (a miss costs one indexed read).
 */
const MAX_CACHED = 50_000;

export class Dictionary {
  private readonly ids = new Map<string, number>();
  private readonly texts = new Map<number, string>();
  /** Ids inserted by the open write transaction: cached only once it commits. */
  private readonly pending = new Map<string, number>();
  private readonly pendingTexts = new Map<number, string>();
  /** Packed object keys (packing.ts); only keys whose ids are committed stay in it. */
  readonly keys = new Map<string, string>();
  readonly shapes = new Map<string, string>();
  readonly shapeKeys = new Map<number, string[]>();

  constructor(private readonly h: SqliteHandle) {}

  /** The id of a text, or undefined when no write ever stored it (nothing refers to it then). */
  find(text: string): number | undefined {
    const cached = this.ids.get(text) ?? this.pending.get(text);
    if (cached !== undefined) return cached;
    const id = this.h.stmt('SELECT id FROM dictionary WHERE text = ?').pluck().get(text) as number | undefined;
    if (id !== undefined) this.remember(text, id);
    return id;
  }

  /** Inside a write transaction: the id of a text, added on first use. */
  idOf(text: string): number {
    const found = this.find(text);
    if (found !== undefined) return found;
    const id = Number(this.h.stmt('INSERT INTO dictionary (text) VALUES (?)').run(text).lastInsertRowid);
    this.pending.set(text, id);
    this.pendingTexts.set(id, text);
    return id;
  }

  textOf(id: number): string {
    const cached = this.texts.get(id) ?? this.pendingTexts.get(id);
    if (cached !== undefined) return cached;
    const text = this.h.stmt('SELECT text FROM dictionary WHERE id = ?').pluck().get(id) as string | undefined;
    if (text === undefined) throw new Error(`internal: dictionary id ${id} is unknown`);
    this.remember(text, id);
    return text;
  }

  /** After the write transaction committed: its new ids are cached. */
  committed(): void {
    for (const [text, id] of this.pending) this.remember(text, id);
    this.rolledBack();
  }

  /** Where the open transaction's new ids stand now: a savepoint (see `rollbackTo`). */
  mark(): number {
    return this.pending.size;
  }

  /** After a rollback to a savepoint taken at `mark`: the ids inserted since never existed. */
  rollbackTo(mark: number): void {
    if (this.pending.size <= mark) return;
    let index = 0;
    for (const [text, id] of [...this.pending]) {
      if (index++ < mark) continue;
      this.pending.delete(text);
      this.pendingTexts.delete(id);
    }
    this.clearPacking();
  }

  /** After the write transaction rolled back: its new ids never existed. */
  rolledBack(): void {
    if (this.pending.size) this.clearPacking();
    this.pending.clear();
    this.pendingTexts.clear();
  }

  /** Packing's caches may hold ids of a rolled-back transaction: they start over. */
  private clearPacking(): void {
    this.keys.clear();
    this.shapes.clear();
    this.shapeKeys.clear();
  }

  private remember(text: string, id: number): void {
    if (
      this.ids.size >= MAX_CACHED ||
      this.keys.size >= MAX_CACHED ||
      this.shapes.size >= MAX_CACHED ||
      this.shapeKeys.size >= MAX_CACHED
    ) {
      this.ids.clear();
      this.texts.clear();
      this.clearPacking();
    }
    this.ids.set(text, id);
    this.texts.set(id, text);
  }
}

const dictionaries = new WeakMap<SqliteHandle, Dictionary>();

export function dictionaryOf(h: SqliteHandle): Dictionary {
  let dictionary = dictionaries.get(h);
  if (!dictionary) {
    dictionary = new Dictionary(h);
    dictionaries.set(h, dictionary);
  }
  return dictionary;
}

import type { EntityWrite } from './entity-store';

/**
 * An initial load: the restore of an export into an empty store, at the engine's pace (optional part;
 * `catalog.importRecords(records, { initial: true })` and `metacatalog ingest --initial` use it when
 * the adapter has it, and take the ordinary commit path otherwise).
 *
 * The store writes the entities' stored rows first and builds what search needs (indexes, full text,
 * counts) once, in `buildSearch`. A load is all or nothing across every call: until `complete`
 * returns, a crash, a failed call or `close()` leaves the store as it was before `begin` (empty) the
 * next time it is opened, never with some entities stored or some of them unsearchable. How the
 * adapter keeps that promise (a marker rolled back when the store is opened, one transaction...) is
 * its own, and documented with it.
 *
 * While a load runs the store takes no other writes from the loading process but the load's own (the
 * domain sends the export's versions, change events, jobs and timeseries rows through the ordinary
 * `commit` after `buildSearch`); another process using the store during the load is refused with
 * UNAVAILABLE (SQLite: the file is being loaded) or waits for the load's end (PostgreSQL: one transaction
 * whose locks its statements queue behind).
 */
export interface InitialLoad {
  /**
   * Starts a load. Refused with CONFLICT (nothing changed) when the store holds an entity, a change
   * event, a kept version or a timeseries row. A load this adapter began and has not completed goes
   * on (the call is idempotent).
   */
  begin(): Promise<void>;
  /**
   * Stores new entities: every write has `expectVersion` 0, aspects in `put` (stored as given: values,
   * versions, stamps, system metadata) and its search document. Entities come in strictly increasing
   * URN order across the calls of a load (an export's order); one that does not is refused with
   * INVALID_INPUT and the load is abandoned. Search may not see them before `buildSearch`.
   */
  loadEntities(writes: readonly EntityWrite[]): Promise<void>;
  /** Builds every search structure of the loaded entities, once. After it, `commit` may write the rest of the load. */
  buildSearch(): Promise<void>;
  /** Ends the load: from now on the store is an ordinary, complete one. */
  complete(): Promise<void>;
  /** Rolls a load this adapter began back: the store is empty again (a failed call of the domain). */
  abandon(): Promise<void>;
}

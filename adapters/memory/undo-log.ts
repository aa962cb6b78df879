/**
 * The inverse of every change a commit made so far, so that a failure part-way through (a throwing
 * fault injector, a bug) puts every store back as it was. Stores record an undo step next to each change.
 */
export class UndoLog {
  private readonly steps: Array<() => void> = [];

  record(undo: () => void): void {
    this.steps.push(undo);
  }

  /** Undoes every recorded change, newest first. */
  rollback(): void {
    for (let index = this.steps.length - 1; index >= 0; index--) this.steps[index]!();
    this.steps.length = 0;
  }
}

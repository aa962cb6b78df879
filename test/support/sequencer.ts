import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Longest files first, by the seconds each took in a quiet run of the whole suite (file-durations.json,
 * refreshed with `node test/support/record-file-durations.mjs` after `npx vitest run`). vitest's own
 * order uses the durations of the last run, kept in node_modules: a fresh clone has none, and vitest
 * then starts the largest files first. Many of the longest files are among the smallest (a conformance
 * suite is one line), so in CI they started last and ran on alone at the end: a third of a minute.
 * A file missing from the table (a new one) counts by its size, as vitest would, at 1 s per 4 KB.
 */
const durations = JSON.parse(readFileSync(new URL('./file-durations.json', import.meta.url), 'utf8')) as Record<string, number>;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = new Map<TestSpecification, number>();
    for (const file of files) {
      const path = relative(root, file.moduleId);
      seconds.set(file, durations[path] ?? statSync(file.moduleId).size / 4096);
    }
    return [...files].sort((a, b) => {
      // Groups in their order, as vitest does; the projects of a group side by side.
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      return group !== 0 ? group : seconds.get(b)! - seconds.get(a)!;
    });
  }
}

// Writes test/support/file-durations.json from the JSON report of the last `npx vitest run`
// (.vitest-tmp/results.json): the seconds each file took, which test/support/sequencer.ts orders by.
// Run it after a whole run on a quiet machine.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const report = JSON.parse(readFileSync(`${root}.vitest-tmp/results.json`, 'utf8'));
const durations = {};
for (const file of report.testResults.sort((a, b) => (a.name < b.name ? -1 : 1))) {
  durations[relative(root, file.name)] = Math.round((file.endTime - file.startTime) / 100) / 10;
}
writeFileSync(`${root}test/support/file-durations.json`, `${JSON.stringify(durations, null, 2)}\n`);
console.log(`recorded ${Object.keys(durations).length} files`);

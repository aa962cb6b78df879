import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Code shown in the docs is code that compiles: each block of docs/adapters.md marked
// `<!-- checked: FILE -->` is a verbatim part of FILE, a file `tsc --noEmit` checks (an example, or a
// file under test/types). The harness example of the test kit's own doc comment is checked the same way.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string): string => readFileSync(join(root, file), 'utf8');

/** The lines of test/types/conformance-harness.ts that the docs show. */
const harness = read('test/types/conformance-harness.ts').split('// docs:start\n')[1]!;

function checkedBlocks(markdown: string): Array<{ file: string; code: string }> {
  return [...markdown.matchAll(/<!-- checked: (\S+) -->\n```ts\n([\s\S]*?)```\n/g)].map((m) => ({ file: m[1]!, code: m[2]! }));
}

describe('docs snippets', () => {
  const blocks = checkedBlocks(read('docs/adapters.md'));

  it('docs/adapters.md shows the harness and the example adapter from checked files', () => {
    expect(blocks.map((b) => b.file)).toEqual(
      expect.arrayContaining([
        'examples/adapter-from-parts/json-lines-store.ts',
        'examples/adapter-from-parts/index.ts',
        'test/types/conformance-harness.ts',
      ]),
    );
  });

  it('every checked block is a verbatim part of its file', () => {
    for (const { file, code } of blocks) expect({ file, found: read(file).includes(code) }).toEqual({ file, found: true });
    expect(blocks.find((b) => b.file === 'test/types/conformance-harness.ts')?.code).toBe(harness);
  });

  it("the test kit's doc comment shows the same harness", () => {
    const comment = read('src/testing/index.ts').match(/ \* ```ts\n([\s\S]*?) \* ```\n/)![1]!;
    expect(comment.replace(/^ \*( |$)/gm, '')).toBe(harness);
  });

  it('a changed snippet is caught (the check can fail)', () => {
    const planted = `<!-- checked: test/types/conformance-harness.ts -->\n\`\`\`ts\n${harness.replace('changeFeed: true', 'changeFeed: false')}\`\`\`\n`;
    const [block] = checkedBlocks(planted);
    expect(read(block!.file).includes(block!.code)).toBe(false);
  });
});

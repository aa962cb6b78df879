import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// Reads the build (dist/): `npm test` builds first.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const registerForbid = pathToFileURL(join(root, 'test/fixtures/register-forbid.mjs')).href;

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const child = spawnSync(process.execPath, ['--import', registerForbid, ...args], { cwd: root, encoding: 'utf8' });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('loading', () => {
  it("import 'metacatalog/http' loads neither graphql nor a native module (graphql comes with the first GraphQL request)", () => {
    const result = run([
      '--input-type=module',
      '-e',
      "const m = await import('metacatalog/http'); console.log(Object.keys(m).sort().join(' '))",
    ]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split(' ')).toEqual(
      expect.arrayContaining(['createFetchHandler', 'createNodeListener', 'createMetricsHandler']),
    );
  });

  it('the bin answers --help without loading better-sqlite3 or graphql, listing serve', () => {
    const result = run([join(root, 'dist/cli.js'), '--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/serve\s+run the HTTP service/);
  });
});

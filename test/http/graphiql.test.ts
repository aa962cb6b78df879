import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './helpers';

// The assets come from the build (npm test builds first): dist/graphiql/.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('a page for a person', () => {
  it('GET / says what the service is and links GraphiQL, without credentials', async () => {
    const response = await fetch(`${t.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await response.text();
    expect(page).toContain('<a href="/graphiql">GraphiQL</a>');
  });

  it('GET /graphiql loads GraphiQL and React from this server only (no CDN), and the files are served', async () => {
    const page = await (await fetch(`${t.url}/graphiql`)).text();
    const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources).toEqual([
      '/graphiql/graphiql.min.css',
      '/graphiql/react.production.min.js',
      '/graphiql/react-dom.production.min.js',
      '/graphiql/graphiql.min.js',
    ]);
    for (const source of sources) {
      const asset = await fetch(`${t.url}${source}`);
      expect(asset.status, source).toBe(200);
      expect((await asset.text()).length, source).toBeGreaterThan(1000);
    }
    expect((await call(t.url, 'GET', '/graphiql/not-a-file.js')).status).toBe(404);
  });
});

/** Debian's chromium, when installed (apt-get install chromium); the browser test needs it. */
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));

/** Under CI (`CI` set) the browser is installed by .ci/run, so a missing one is a failure, not a skip. */
const IN_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

describe('GraphiQL in a real headless browser', () => {
  it.runIf(IN_CI && !CHROMIUM)('has chromium to run in (CI installs it: apt-get install chromium)', () => {
    expect(CHROMIUM, 'CI is set but /usr/bin/chromium is missing: .ci/run installs it').toBeDefined();
  });
  it.skipIf(!CHROMIUM)(
    'renders the IDE from this server alone (skipped where no chromium is installed: apt-get install chromium)',
    async () => {
      const profile = mkdtempSync(join(tmpdir(), 'metacatalog-chromium-'));
      try {
        // Asynchronous: the server answering the browser runs in this process.
        const result = await promisify(execFile)(
          CHROMIUM!,
          [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            `--user-data-dir=${profile}`,
            '--virtual-time-budget=10000',
            '--dump-dom',
            `${t.url}/graphiql`,
          ],
          { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
        );
        // Rendered by React: GraphiQL's own elements, no longer the loading text.
        expect(result.stdout).toContain('graphiql-container');
        expect(result.stdout).toContain('graphiql-execute-button');
        expect(result.stdout).not.toContain('Loading GraphiQL');
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    },
    90_000,
  );
});

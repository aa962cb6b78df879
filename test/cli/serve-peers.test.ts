import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, requireBuiltCli, ROOT, spawnServe, type ServeChild } from './helpers';

// `metacatalog serve` where graphql and @graphql-tools/schema (optional peers) are not installed: module hooks
// make them look uninstalled (test/fixtures/hide-peers.mjs). The REST routes serve; GraphQL names the install.

const HIDE_PEERS = pathToFileURL(join(ROOT, 'test/fixtures/register-hide-peers.mjs')).href;

describe('serve without the GraphQL peers', () => {
  let served: ServeChild | undefined;
  afterEach(async () => {
    if (served && served.child.exitCode === null) {
      served.child.kill('SIGTERM');
      await served.exit;
    }
  });

  it('starts, says at start what /api/graphql needs, serves REST, and answers GraphQL with the install command', async () => {
    requireBuiltCli();
    served = await spawnServe(
      ['--db', ':memory:', '--quiet'],
      cliEnv({ NODE_OPTIONS: `--import ${HIDE_PEERS}`, METACATALOG_HIDDEN_PEERS: 'graphql,@graphql-tools/schema' }),
    );
    const install = 'npm install graphql @graphql-tools/schema';
    const deadline = Date.now() + 5_000;
    while (!served.output().includes(install) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(served.output()).toContain(
      `/api/graphql (and the command line's token commands against this server) needs graphql and @graphql-tools/schema`,
    );
    expect(served.output()).toContain(install);

    const base = served.url.replace(/\/$/, '');
    const headers = { authorization: `Bearer ${served.token}`, 'content-type': 'application/json' };
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const graphql = await fetch(`${base}/api/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: '{ listAccessTokens(input: {}) { total } }' }),
    });
    expect(graphql.status).toBe(501);
    expect(await graphql.text()).toContain(
      `the GraphQL endpoint (/api/graphql) needs the packages graphql, @graphql-tools/schema, optional peer dependencies that are not installed: ${install}`,
    );
  });
});

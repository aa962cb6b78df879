// Starts the graphql-yoga example in a child process (it reads the build: `npm test` builds first),
// asks it over HTTP on loopback with and without a bearer token, and stops it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const example = fileURLToPath(new URL('./graphql-yoga.mjs', import.meta.url));

interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  token: string;
  output: () => string;
}

function start(): Promise<Started> {
  const child = spawn(process.execPath, [example], {
    env: { ...process.env, PORT: '0' },
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the example did not start: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /GraphQL on (http:\/\/127\.0\.0\.1:\d+\/api\/graphql)/.exec(output)?.[1];
      const token = /admin token \(valid one day, shown once\): (\S+)/.exec(output)?.[1];
      if (url && token) {
        clearTimeout(timer);
        resolve({ child, url, token, output: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the example exited with ${code}: ${output}`)));
  });
}

describe('examples/graphql-yoga.mjs', () => {
  let server: Started;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
  });

  const post = (body: unknown, token?: string) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });

  it('answers a query as the actor of a verified bearer token', async () => {
    const response = await post(
      {
        query: 'query list($input: ListAccessTokenInput!) { listAccessTokens(input: $input) { total tokens { name actorUrn } } }',
        variables: { input: { filters: [] } },
      },
      server.token,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      data: { listAccessTokens: { total: 1, tokens: [{ name: 'bootstrap', actorUrn: 'urn:li:corpuser:admin' }] } },
    });
  });

  it('answers UNAUTHENTICATED without a token, and 401 with the reason for a bad one', async () => {
    const anonymous = (await (await post({ query: '{ listAccessTokens(input: {}) { total } }' })).json()) as {
      errors: Array<{ extensions: { code: string } }>;
    };
    expect(anonymous.errors.map((e) => e.extensions.code)).toEqual(['UNAUTHENTICATED']);
    const bad = await post({ query: '{ listAccessTokens(input: {}) { total } }' }, 'not-a-token');
    expect(bad.status).toBe(401);
    const body = (await bad.json()) as { errors: Array<{ extensions: { code: string; reason: string } }> };
    expect(body.errors[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'malformed' });
  });

  it('refuses a document over the cost budget before running it', async () => {
    const fields = Array.from(
      { length: 400 },
      (_, i) => `s${i}: searchAcrossEntities(input: { query: "*", count: $n }) { searchResults { entity { urn } } }`,
    );
    const response = await post({ query: `query($n: Int) { ${fields.join(' ')} }`, variables: { n: 10000 } }, server.token);
    const body = (await response.json()) as { errors: Array<{ message: string }> };
    expect(body.errors[0]?.message).toMatch(/cost budget/);
  });

  it('stops on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => server.child.on('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(server.output()).toContain('stopped');
  });
});

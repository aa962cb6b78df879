import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { call, spawnWorkers, type Answer, type Cluster } from './workers';

// Runs the built CLI (dist/cli.js): `npm test` builds first. `serve --workers 2` on one SQLite file.

const dirs: string[] = [];
const running: Cluster[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const ACCOUNT = 'urn:li:corpuser:service_etl';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,etl_output,PROD)';
const PATH = `/openapi/v2/entity/dataset/${encodeURIComponent(DATASET)}/datasetProperties`;

async function graphql<T>(c: Cluster, token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await call(c.port, 'POST', '/api/graphql', { token, body: { query, variables } });
  const json = answer.json<{ data?: T; errors?: unknown }>();
  if (json.errors || !json.data) throw new Error(`GraphQL: ${JSON.stringify(json.errors)}`);
  return json.data;
}

/** Writes through the account's token until both workers answered; every status by worker. */
async function writesOnBothWorkers(c: Cluster, token: string): Promise<Map<string, number[]>> {
  const byWorker = new Map<string, number[]>();
  for (let i = 0; i < 40 && (byWorker.size < 2 || i < 8); i++) {
    const a: Answer = await call(c.port, 'POST', PATH, { token, body: { name: `etl ${i}` } });
    const list = byWorker.get(a.worker ?? '?') ?? [];
    list.push(a.status);
    byWorker.set(a.worker ?? '?', list);
  }
  return byWorker;
}

const statuses = (m: Map<string, number[]>) => new Set([...m.values()].flat());

describe('service accounts under serve --workers 2 (SQLite)', { timeout: 120_000 }, () => {
  it("a policy change and a disabled account's token take effect at once on both workers", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metacatalog-accounts-'));
    dirs.push(dir);
    const c = await spawnWorkers(2, ['--db', join(dir, 'catalog.db'), '--quiet']);
    running.push(c);
    const admin = c.token!;
    await graphql(c, admin, 'mutation { createServiceAccount(input: { id: "etl", displayName: "nightly ETL" }) { urn } }');
    const policy = {
      type: 'PLATFORM',
      name: 'etl writes',
      state: 'ACTIVE',
      privileges: ['EDIT_ENTITY'],
      actors: { users: [ACCOUNT], resourceOwners: false, allUsers: false, allGroups: false },
    };
    const { createPolicy: policyUrn } = await graphql<{ createPolicy: string }>(
      c,
      admin,
      'mutation($i: PolicyUpdateInput!) { createPolicy(input: $i) }',
      {
        i: policy,
      },
    );
    const { createAccessToken } = await graphql<{ createAccessToken: { accessToken: string } }>(
      c,
      admin,
      'mutation($i: CreateAccessTokenInput!) { createAccessToken(input: $i) { accessToken } }',
      { i: { type: 'PERSONAL', actorUrn: ACCOUNT, duration: 'ONE_DAY', name: 'etl' } },
    );
    const token = createAccessToken.accessToken;

    const granted = await writesOnBothWorkers(c, token);
    expect(granted.size).toBe(2);
    expect(statuses(granted)).toEqual(new Set([200]));

    // Each worker compiled the policies once; a change through one is seen by the other on its next request.
    await graphql(c, admin, 'mutation($u: String!, $i: PolicyUpdateInput!) { updatePolicy(urn: $u, input: $i) }', {
      u: policyUrn,
      i: { ...policy, state: 'INACTIVE' },
    });
    const inactive = await writesOnBothWorkers(c, token);
    expect(inactive.size).toBe(2);
    expect(statuses(inactive)).toEqual(new Set([403]));
    await graphql(c, admin, 'mutation($u: String!, $i: PolicyUpdateInput!) { updatePolicy(urn: $u, input: $i) }', {
      u: policyUrn,
      i: policy,
    });
    expect(statuses(await writesOnBothWorkers(c, token))).toEqual(new Set([200]));

    await graphql(c, admin, 'mutation($u: String!) { disableServiceAccount(urn: $u) { disabled } }', { u: ACCOUNT });
    const disabled = await writesOnBothWorkers(c, token);
    expect(disabled.size).toBe(2);
    expect(statuses(disabled)).toEqual(new Set([401]));

    expect(await c.stop()).toBe(0);
  });
});

import type { StorageAdapter, StoredEntity } from '../../adapter/types';
import { scanPages } from '../../adapter/scan-pages';
import { compilePolicy, grantsTo, type CompiledPolicy, type GrantSource } from './compiled-policies';
import type { PolicyResources } from './policy-model';
import type { Privilege } from './privileges';
import { SERVICE_ACCOUNT_ASPECT, SERVICE_ACCOUNT_SCAN } from './service-account-model';

/** A stored policy record as the access state reads it (the `policyInfo` aspect). */
export interface PolicyRecord {
  urn: string;
  name: string;
  state: 'ACTIVE' | 'INACTIVE';
  privileges: Privilege[];
  actors: { users: string[]; allUsers: boolean };
  resources?: PolicyResources;
}

/** What one actor is granted: privileges held everywhere (with their sources), and the policies that grant per resource. */
export interface ActorGrants {
  everywhere: ReadonlyMap<Privilege, readonly GrantSource[]>;
  /** Policies for this actor that name resources (each grants its privileges where it covers). */
  scoped: readonly CompiledPolicy[];
}

/** The actors whose grants are remembered per snapshot; started over past this. */
const ACTOR_LIMIT = 1000;

/** The policies compiled once per change, with the disabled service accounts. */
export class AccessSnapshot {
  private readonly byActor = new Map<string, ActorGrants>();

  constructor(
    readonly policies: readonly CompiledPolicy[],
    readonly disabledAccounts: ReadonlySet<string>,
    /** Whether any policy names resources (when none does, every grant is everywhere). */
    readonly anyScoped: boolean,
  ) {}

  grantsOf(actor: string): ActorGrants {
    let grants = this.byActor.get(actor);
    if (grants) return grants;
    const everywhere = new Map<Privilege, GrantSource[]>();
    const scoped: CompiledPolicy[] = [];
    if (!this.disabledAccounts.has(actor)) {
      for (const policy of this.policies) {
        if (!grantsTo(policy, actor)) continue;
        if (!policy.everywhere) {
          scoped.push(policy);
          continue;
        }
        for (const p of policy.privileges) {
          const list = everywhere.get(p);
          if (list) list.push(policy.source);
          else everywhere.set(p, [policy.source]);
        }
      }
    }
    grants = { everywhere, scoped };
    if (this.byActor.size >= ACTOR_LIMIT) this.byActor.clear();
    this.byActor.set(actor, grants);
    return grants;
  }
}

/** The policy record of a stored `policyInfo` aspect (older records have no type or resources). */
function policyRecordOf(entity: StoredEntity): PolicyRecord | undefined {
  const value = entity.aspects.policyInfo?.value;
  if (!value) return undefined;
  const actors = (value.actors ?? {}) as { users?: unknown; allUsers?: unknown };
  return {
    urn: entity.urn,
    name: String(value.name ?? ''),
    state: value.state === 'INACTIVE' ? 'INACTIVE' : 'ACTIVE',
    privileges: (Array.isArray(value.privileges) ? value.privileges : []) as Privilege[],
    actors: { users: (Array.isArray(actors.users) ? actors.users : []) as string[], allUsers: actors.allUsers === true },
    ...(value.resources && typeof value.resources === 'object' ? { resources: value.resources as unknown as PolicyResources } : {}),
  };
}

export interface StaticGrant {
  name?: string;
  actors: readonly string[] | '*';
  privileges: readonly Privilege[];
}

const FEED_QUERY = { entityTypes: ['policy', 'corpuser'], aspects: ['policyInfo', SERVICE_ACCOUNT_ASPECT] } as const;

/**
 * Keeps the compiled policies current. Where the adapter keeps a change feed (and the catalog records
 * events), each check asks the feed one question — did a policy or a service account change since the
 * last look? — and recompiles only when one did; commits of other processes sharing the store show up
 * the same way. Without a feed, the records are read on every check and compiled when they differ.
 * Concurrent checks share one look.
 */
export class AccessState {
  private snapshot: AccessSnapshot | undefined;
  private fingerprint = '';
  private cursor: string | undefined;
  private pending: Promise<AccessSnapshot> | undefined;
  /** How many times the policies were compiled (tests and benchmarks read it). */
  compilations = 0;

  constructor(
    private readonly adapter: StorageAdapter,
    private readonly staticPolicies: readonly StaticGrant[],
    private readonly feedEnabled: () => boolean,
  ) {}

  current(): Promise<AccessSnapshot> {
    if (!this.pending) {
      this.pending = this.refresh().finally(() => {
        this.pending = undefined;
      });
    }
    return this.pending;
  }

  /** Forget the compiled state (the next check reads the records again). */
  invalidate(): void {
    this.snapshot = undefined;
    this.cursor = undefined;
  }

  private async refresh(): Promise<AccessSnapshot> {
    const adapter = this.adapter;
    if (adapter.readChanges && adapter.capabilities.changeFeed && this.feedEnabled()) {
      if (this.snapshot && this.cursor !== undefined) {
        const page = await adapter.readChanges({ ...FEED_QUERY, after: this.cursor, limit: 1 });
        const stale = page.oldestId !== undefined && BigInt(page.oldestId) - 1n > BigInt(this.cursor);
        if (!page.events.length && !stale) {
          if (page.scannedId !== undefined) this.cursor = page.scannedId;
          return this.snapshot;
        }
        this.cursor = page.lastId ?? page.scannedId ?? this.cursor;
      } else {
        const page = await adapter.readChanges({ ...FEED_QUERY, limit: 1 });
        this.cursor = page.lastId ?? '0';
      }
      const { policies, accounts } = await this.readRecords();
      this.snapshot = this.compile(policies, accounts);
      return this.snapshot;
    }
    const { policies, accounts, fingerprint } = await this.readRecords();
    if (!this.snapshot || fingerprint !== this.fingerprint) {
      this.snapshot = this.compile(policies, accounts);
      this.fingerprint = fingerprint;
    }
    return this.snapshot;
  }

  private async readRecords(): Promise<{ policies: PolicyRecord[]; accounts: Set<string>; fingerprint: string }> {
    const policies: PolicyRecord[] = [];
    const accounts = new Set<string>();
    const marks: string[] = [];
    const scan = { entityType: 'policy', requireAspect: 'policyInfo', aspectNames: ['policyInfo'] };
    for await (const page of scanPages(this.adapter, scan, 500)) {
      for (const entity of page) {
        const record = policyRecordOf(entity);
        if (record) policies.push(record);
        marks.push(`${entity.urn}@${entity.aspects.policyInfo?.version ?? 0}`);
      }
    }
    for await (const page of scanPages(this.adapter, SERVICE_ACCOUNT_SCAN, 500)) {
      for (const entity of page) {
        const value = entity.aspects[SERVICE_ACCOUNT_ASPECT]?.value;
        if (value?.disabled === true) accounts.add(entity.urn);
        marks.push(`${entity.urn}@${entity.aspects[SERVICE_ACCOUNT_ASPECT]?.version ?? 0}`);
      }
    }
    return { policies, accounts, fingerprint: marks.join('\n') };
  }

  private compile(records: readonly PolicyRecord[], disabled: ReadonlySet<string>): AccessSnapshot {
    this.compilations++;
    const compiled: CompiledPolicy[] = [];
    for (const policy of this.staticPolicies) {
      compiled.push(
        compilePolicy({
          source: 'options',
          name: policy.name ?? 'options',
          privileges: policy.privileges,
          users: policy.actors === '*' ? [] : policy.actors,
          allUsers: policy.actors === '*',
          resources: undefined,
        }),
      );
    }
    for (const record of records) {
      if (record.state !== 'ACTIVE') continue;
      compiled.push(
        compilePolicy({
          source: record.urn,
          name: record.name,
          privileges: record.privileges,
          users: record.actors.users,
          allUsers: record.actors.allUsers,
          resources: record.resources,
        }),
      );
    }
    return new AccessSnapshot(
      compiled,
      disabled,
      compiled.some((p) => !p.everywhere),
    );
  }
}

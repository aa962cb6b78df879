import type { JsonObject, StoredEntity } from '../../adapter/types';
import { scanPages } from '../../adapter/scan-pages';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import type { Actor } from '../access/actor';
import { SERVICE_ACCOUNT_ASPECT, SERVICE_ACCOUNT_PREFIX, SERVICE_ACCOUNT_SCAN, type ServiceAccount } from '../access/service-account-model';
import type { CatalogContext } from '../context';
import type { DomainOwners, OwnedChange } from '../entities/owner';
import type { Admission, WriteItem, WritePipeline } from '../entities/write-pipeline';
import { tokenEntities } from './listing';
import { revokedAtOf, TOKEN_ASPECT, toMetadata } from './model';
import type { TokenEdit } from './owner';

export type { ServiceAccount } from '../access/service-account-model';

export interface CreateServiceAccountInput {
  /** The account is `urn:li:corpuser:service_<id>`. */
  id: string;
  displayName?: string | null;
  description?: string | null;
}

/** `catalog.serviceAccounts` (MANAGE_SERVICE_ACCOUNTS). */
export interface ServiceAccounts {
  create(actor: Actor, input: CreateServiceAccountInput): Promise<ServiceAccount>;
  list(actor: Actor): Promise<ServiceAccount[]>;
  get(actor: Actor, urn: string): Promise<ServiceAccount | undefined>;
  /** Disables the account: every token of it is revoked in the same commit (refused at once, in every process); it holds no privilege. */
  disable(actor: Actor, urn: string): Promise<ServiceAccount>;
  /** Enables it again: its privileges come back; tokens revoked by `disable` stay revoked (make new ones). */
  enable(actor: Actor, urn: string): Promise<ServiceAccount>;
  /** Removes the account and revokes its tokens. */
  remove(actor: Actor, urn: string): Promise<true>;
}

/** The accounts' own edits, built by `catalog.serviceAccounts` and planned by the owner (`result`: the account as written). */
type AccountEdit = { kind: 'create'; account: ServiceAccount } | { kind: 'disable'; now: number } | { kind: 'enable' } | { kind: 'remove' };

const ID_PATTERN = /^[A-Za-z0-9_.-]{1,100}$/;
const REFUSAL = `${SERVICE_ACCOUNT_ASPECT} is written only by catalog.serviceAccounts`;

function toAccount(entity: StoredEntity | undefined): ServiceAccount | undefined {
  const value = entity?.aspects[SERVICE_ACCOUNT_ASPECT]?.value;
  if (!entity || !value) return undefined;
  return {
    urn: entity.urn,
    id: entity.urn.slice(SERVICE_ACCOUNT_PREFIX.length),
    displayName: typeof value.displayName === 'string' ? value.displayName : null,
    description: typeof value.description === 'string' ? value.description : null,
    disabled: value.disabled === true,
    createdAt: typeof value.createdAt === 'number' ? value.createdAt : 0,
    createdBy: typeof value.createdBy === 'string' ? value.createdBy : '',
    disabledAt: typeof value.disabledAt === 'number' ? value.disabledAt : null,
  };
}

function toValue(account: ServiceAccount): JsonObject {
  const { urn: _urn, id: _id, ...rest } = account;
  return { ...rest };
}

function accountUrnOf(urn: unknown): string {
  if (typeof urn !== 'string' || !urn.startsWith(SERVICE_ACCOUNT_PREFIX) || !ID_PATTERN.test(urn.slice(SERVICE_ACCOUNT_PREFIX.length))) {
    const message = `must be a service account URN (${SERVICE_ACCOUNT_PREFIX}<id>)`;
    throw new CatalogError('INVALID_INPUT', `urn ${message}, got ${JSON.stringify(urn)}`, { details: [{ path: 'urn', message }] });
  }
  return urn;
}

/**
 * Service accounts: named, non-human actors (`urn:li:corpuser:service_<id>`) that hold tokens (made with
 * `catalog.tokens.create` by a MANAGE_ACCESS_TOKENS holder) and that policies name like users. Their
 * record is written through the one write path; disabling one revokes its tokens in the same commit
 * (the revocation path of every token: verification refuses them at once, and the revocation feed lists
 * them) and takes its privileges away (the compiled policies learn it from the change feed).
 */
export class ServiceAccountService implements ServiceAccounts {
  constructor(
    private readonly ctx: CatalogContext,
    /** The one write path: every edit is admitted (MANAGE_SERVICE_ACCOUNTS) and written there. */
    private readonly pipeline: WritePipeline,
  ) {}

  async create(actor: Actor, input: CreateServiceAccountInput): Promise<ServiceAccount> {
    const admitted = await this.admit(actor);
    const caller = admitted.who;
    const violations: Violation[] = [];
    if (typeof input !== 'object' || input === null) throw new CatalogError('INVALID_INPUT', 'input must be an object');
    if (typeof input.id !== 'string' || !ID_PATTERN.test(input.id))
      violations.push({ path: '/id', message: 'must be 1 to 100 letters, digits, "_", "." or "-"' });
    for (const field of ['displayName', 'description'] as const) {
      const v = input[field];
      if (v !== undefined && v !== null && (typeof v !== 'string' || v.length > 4096))
        violations.push({ path: `/${field}`, message: 'must be a string of at most 4096 characters' });
    }
    throwIfViolations(violations, 'invalid service account');
    const account: ServiceAccount = {
      urn: `${SERVICE_ACCOUNT_PREFIX}${input.id}`,
      id: input.id,
      displayName: input.displayName ?? null,
      description: input.description ?? null,
      disabled: false,
      createdAt: this.ctx.clock(),
      createdBy: caller,
      disabledAt: null,
    };
    await this.writeEdits(admitted, account.urn, { kind: 'create', account }, false);
    return account;
  }

  async list(actor: Actor): Promise<ServiceAccount[]> {
    await this.authorize(actor);
    const out: ServiceAccount[] = [];
    for await (const page of scanPages(this.ctx.adapter, SERVICE_ACCOUNT_SCAN, 500)) {
      for (const entity of page) {
        const account = toAccount(entity);
        if (account) out.push(account);
      }
    }
    return out;
  }

  async get(actor: Actor, urn: string): Promise<ServiceAccount | undefined> {
    await this.authorize(actor);
    const [entity] = await this.ctx.adapter.readEntities([accountUrnOf(urn)], [SERVICE_ACCOUNT_ASPECT]);
    return toAccount(entity);
  }

  async disable(actor: Actor, urn: string): Promise<ServiceAccount> {
    const admitted = await this.admit(actor);
    const edit: AccountEdit = { kind: 'disable', now: this.ctx.clock() };
    return (await this.writeEdits(admitted, accountUrnOf(urn), edit, true)) as ServiceAccount;
  }

  async enable(actor: Actor, urn: string): Promise<ServiceAccount> {
    const admitted = await this.admit(actor);
    return (await this.writeEdits(admitted, accountUrnOf(urn), { kind: 'enable' }, false)) as ServiceAccount;
  }

  async remove(actor: Actor, urn: string): Promise<true> {
    const admitted = await this.admit(actor);
    await this.writeEdits(admitted, accountUrnOf(urn), { kind: 'remove' }, true);
    return true;
  }

  /**
   * The account's edit, with (when `revokeTokens`) a revocation of each of its live tokens: one commit.
   * Returns the owner's result (the account as written).
   */
  private async writeEdits(admitted: Admission, urn: string, edit: AccountEdit, revokeTokens: boolean): Promise<unknown> {
    const items: WriteItem[] = [{ op: 'edit', urn, aspect: SERVICE_ACCOUNT_ASPECT, edit, path: '' }];
    if (revokeTokens) {
      const caller = admitted.who;
      for await (const entity of tokenEntities(this.ctx)) {
        const metadata = toMetadata(entity);
        if (!metadata || metadata.actorUrn !== urn || revokedAtOf(entity) !== undefined) continue;
        const revoke: TokenEdit = { kind: 'revoke', id: metadata.id, caller, manager: true };
        items.push({ op: 'edit', urn: entity.urn, aspect: TOKEN_ASPECT, edit: revoke, path: `/tokens/${items.length - 1}` });
      }
    }
    const { results } = await this.pipeline.write(admitted, items, { message: `invalid write of ${urn}` });
    return results[0];
  }

  /** Authenticated and authorized once, by the write path (its writes are not checked again). */
  private admit(actor: Actor): Promise<Admission> {
    return this.pipeline.admit(actor, ['MANAGE_SERVICE_ACCOUNTS']);
  }

  private async authorize(actor: Actor): Promise<string> {
    const caller = await this.ctx.authenticate(actor);
    await this.ctx.authorizer.require(actor, 'MANAGE_SERVICE_ACCOUNTS');
    return caller;
  }
}

/** The service account record's owner: written only by `catalog.serviceAccounts` (MANAGE_SERVICE_ACCOUNTS). */
export function serviceAccountOwners(): DomainOwners {
  return {
    aspects: [
      {
        name: 'service accounts',
        governs: (_type, aspect) => aspect === SERVICE_ACCOUNT_ASPECT,
        privilege: () => 'MANAGE_SERVICE_ACCOUNTS',
        async prepare(_principal, items, violations) {
          for (const item of items) if (item.op !== 'edit') violations.push({ path: item.path, message: REFUSAL });
          return { plan: (item, entity) => planAccountEdit(item.urn, item.edit as AccountEdit, entity) };
        },
      },
    ],
  };
}

/** The owner's plan of an edit, on the record as the unit of work reads it (`result`: the account as written). */
function planAccountEdit(urn: string, edit: AccountEdit, stored: StoredEntity | undefined): OwnedChange {
  const existing = toAccount(stored);
  if (edit.kind === 'create') {
    if (existing) throw new CatalogError('CONFLICT', `service account ${urn} exists already`);
    return { put: { value: toValue(edit.account) }, result: edit.account };
  }
  if (!existing) throw new CatalogError('NOT_FOUND', `no service account ${urn}`);
  if (edit.kind === 'remove') return { delete: true };
  const next: ServiceAccount =
    edit.kind === 'disable'
      ? { ...existing, disabled: true, disabledAt: existing.disabled ? existing.disabledAt : edit.now }
      : { ...existing, disabled: false, disabledAt: null };
  return { put: { value: toValue(next) }, result: next };
}

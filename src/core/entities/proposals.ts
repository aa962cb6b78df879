import type { Actor } from '../access/actor';
import type { JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { invalidInput, type Violation } from '../../errors';
import {
  checkCreates,
  checkProposal,
  dryRunGenericPatches,
  type ChangeType,
  type Checked,
  type CheckedUpsert,
  type ProposalHost,
  type ProposalOutcome,
  type UrnMemo,
} from './proposal-check';
import type { WriteItem } from './write-pipeline';

/**
 * An upsert proposal as an item of the write path; its path (which only a violation needs) is made when
 * asked for. A class for the reason `CheckedUpsert` is one.
 */
class ProposedUpsert {
  readonly op = 'upsert' as const;
  readonly urn: string;
  readonly aspect: string;
  readonly value: JsonObject;
  schemaChecked?: boolean;
  systemMetadata?: JsonObject;
  onlyIfAbsent?: 'aspect' | 'entity';
  presencePath?: string;

  constructor(
    private readonly checked: CheckedUpsert,
    private readonly prefix: string,
  ) {
    this.urn = checked.urn;
    this.aspect = checked.aspect;
    this.value = checked.value;
  }

  get path(): string {
    return valuePathOf(this.prefix, this.checked.index);
  }
}

/** Where proposal `index`'s aspect value sits in the call's input. */
function valuePathOf(prefix: string, index: number): string {
  return `${prefix}/${index}/aspect/value`;
}

/**
 * Applies change proposals for `catalog.entities.applyProposals` (docs/datahub-clients.md):
 *
 * 1. every proposal is checked (shape, URN, change type, aspect of the entity type, the aspect's JSON
 *    and, for upserts of generic aspects, its schema; generic patches are tried on the current state);
 *    the error lists every violation with the proposal's index (`<prefix>/<i>/...`) and nothing is written;
 * 2. the proposals become canonical items of the one write path: each aspect is checked by its owner
 *    (a definition, values, a timeseries row...) with its own route's privilege, every privilege before
 *    anything is written;
 * 3. all of them are written in one unit of work, atomically: a timeseries row is appended in the same
 *    commit; one bad proposal refuses the batch and nothing is written.
 */
export async function applyProposals(
  ctx: CatalogContext,
  service: ProposalHost,
  actor: Actor,
  proposals: readonly unknown[],
  options: { prefix?: string } = {},
): Promise<ProposalOutcome[]> {
  await ctx.authenticate(actor);
  const prefix = options.prefix ?? '';
  const at = (i: number) => `${prefix}/${i}`;
  if (!Array.isArray(proposals))
    throw invalidInput([{ path: prefix || '/', message: 'must be a list of change proposals' }], 'invalid change proposals');
  const violations: Violation[] = [];
  const checked: Checked[] = [];
  const memo: UrnMemo = {};
  proposals.forEach((raw, i) => {
    const one = checkProposal(ctx, service, raw, i, at(i), violations, memo);
    if (one) checked.push(one);
  });
  // The proposals that are well-formed are tried further, so that one answer lists every problem.
  await dryRunGenericPatches(service, checked, at, violations);
  await checkCreates(service, checked, at, violations);
  if (violations.length) throw invalidInput(violations, 'invalid change proposals');

  const items: WriteItem[] = [];
  for (const c of checked) {
    switch (c.kind) {
      case 'key':
        break;
      case 'row':
        items.push({ op: 'upsert', urn: c.urn, aspect: c.aspect, value: c.row, path: valuePathOf(prefix, c.index) });
        break;
      case 'upsert': {
        const item = new ProposedUpsert(c, prefix);
        // A generic aspect's value was checked against its schema with the proposal.
        if (c.ownership === 'generic') item.schemaChecked = true;
        if (c.systemMetadata) item.systemMetadata = c.systemMetadata;
        if (c.create) {
          item.onlyIfAbsent = c.create;
          item.presencePath = `${at(c.index)}/changeType`;
        }
        items.push(item);
        break;
      }
      case 'patch': {
        const path = valuePathOf(prefix, c.index);
        items.push({
          op: 'patch',
          urn: c.urn,
          aspect: c.aspect,
          operations: c.operations,
          ...(c.arrayPrimaryKeys ? { arrayPrimaryKeys: c.arrayPrimaryKeys } : {}),
          path,
          patchPath: path,
          valuePath: path,
        });
        break;
      }
      case 'delete':
        items.push(
          c.key
            ? { op: 'deleteEntity', urn: c.urn, path: `${at(c.index)}/aspectName` }
            : { op: 'delete', urn: c.urn, aspect: c.aspect, path: valuePathOf(prefix, c.index) },
        );
        break;
    }
  }
  // The entities as read are made into a map only when a delete asks what was there.
  const outcome = items.length
    ? await service.pipeline.write(actor, items, { message: 'invalid change proposals', compareFirst: true })
    : { before: new Map<string, StoredEntity | undefined>() };
  const changeTypeOf = (c: Checked): ChangeType => (proposals[c.index] as { changeType: ChangeType }).changeType;
  // What the batch's earlier proposals wrote counts as there for a later delete (kept only when there is one).
  const deletes = checked.some((c) => c.kind === 'delete');
  const written = new Set<string>();
  return checked.map((c) => {
    const existed = c.kind === 'delete' ? outcome.before.get(c.urn) : undefined;
    let changed = true;
    if (c.kind === 'key') changed = false;
    else if (c.kind === 'delete')
      changed = c.key
        ? existed !== undefined || [...written].some((w) => w.startsWith(`${c.urn}\n`))
        : existed?.aspects[c.aspect] !== undefined || written.has(`${c.urn}\n${c.aspect}`);
    if (deletes && (c.kind === 'upsert' || c.kind === 'patch')) written.add(`${c.urn}\n${c.aspect}`);
    if (c.kind === 'delete') written.delete(`${c.urn}\n${c.aspect}`);
    return { urn: c.urn, aspectName: c.aspect, changeType: changeTypeOf(c), changed };
  });
}

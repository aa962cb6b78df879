import type { Actor } from '../access/actor';
import type { Privilege } from '../access/privileges';
import type { CatalogContext } from '../context';
import { CatalogError, invalidInput, isCatalogError, type Violation } from '../../errors';
import type { AspectName, AspectMap } from './aspect-types';
import { checkCreates, checkProposal, dryRunGenericPatches, type ChangeType, type Checked, type ProposalOutcome } from './proposal-check';
import type { EntityService, EntityUpsert } from './service';

/** Re-roots the violations of a failed step at its proposal (`<at>/<i>/aspect/value...`), naming it in the message. */
function atProposal(
  error: unknown,
  at: (index: number) => string,
  indices: readonly number[],
  aspectPrefix: (k: number) => string,
): unknown {
  if (!isCatalogError(error)) return error;
  const single = indices.length === 1;
  const details = error.details.map((d) => {
    if (single) {
      const rest = d.path.startsWith('/aspects/') ? d.path.replace(/^\/aspects\/[^/]+/, '') : d.path.startsWith('/patch') ? d.path : '';
      return { path: `${at(indices[0]!)}/aspect/value${rest}`, message: d.message };
    }
    const match = /^\/(\d+)(\/aspects\/[^/]+)?(.*)$/.exec(d.path);
    if (!match) return d;
    const k = Number(match[1]);
    return { path: `${aspectPrefix(k)}${match[3] ?? ''}`, message: d.message };
  });
  const where = single ? `proposal ${indices[0]}` : `proposals ${indices[0]} to ${indices[indices.length - 1]}`;
  return new CatalogError(error.code, `${where}: ${error.message}`, {
    details,
    cause: error,
    ...(error.reason ? { reason: error.reason } : {}),
  });
}

/**
 * Applies change proposals for `catalog.entities.applyProposals` (docs/datahub-clients.md):
 *
 * 1. every proposal is checked (shape, URN, change type, aspect of the entity type, the aspect's JSON
 *    and, for upserts of generic aspects, its schema; generic patches are tried on the current state);
 *    the error lists every violation with the proposal's index (`<prefix>/<i>/...`) and nothing is written;
 * 2. the privileges every proposal needs are checked before the first write;
 * 3. proposals are applied in order: each run of consecutive upserts goes through the bulk path
 *    (`upsertMany`, one atomic unit per 2,000 entities); a patch, a delete, a timeseries row (appended,
 *    never replacing one) and a write of an aspect a domain service owns (a property definition) are
 *    each one atomic write of their own.
 */
export async function applyProposals(
  ctx: CatalogContext,
  service: EntityService,
  actor: Actor,
  proposals: readonly unknown[],
  options: { prefix?: string } = {},
): Promise<ProposalOutcome[]> {
  const principal = await ctx.principal(actor);
  const prefix = options.prefix ?? '';
  const at = (i: number) => `${prefix}/${i}`;
  if (!Array.isArray(proposals))
    throw invalidInput([{ path: prefix || '/', message: 'must be a list of change proposals' }], 'invalid change proposals');
  const violations: Violation[] = [];
  const checked: Checked[] = [];
  proposals.forEach((raw, i) => {
    const one = checkProposal(ctx, service, raw, i, at(i), violations);
    if (one) checked.push(one);
  });
  // The proposals that are well-formed are tried further, so that one answer lists every problem.
  await dryRunGenericPatches(service, checked, at, violations);
  await checkCreates(service, checked, at, violations);
  if (violations.length) throw invalidInput(violations, 'invalid change proposals');

  // Privileges first, so that a refusal comes before any write.
  const needs = new Set<Privilege>();
  for (const c of checked) {
    if (c.kind === 'key') continue;
    if (c.kind === 'delete' && c.key) continue; // the entity's own deletion decides (property definitions need more)
    if ((c.kind === 'upsert' || c.kind === 'patch') && c.ownership !== 'generic') {
      // Its owner authorizes again when it writes; the privilege it names is checked now, before any write.
      const privilege = service.ownerPrivilege(c.entityType, c.aspect);
      if (privilege) needs.add(privilege);
      continue;
    }
    needs.add('EDIT_ENTITY');
  }
  for (const privilege of needs) await ctx.authorizer.require(principal, privilege);

  const outcomes: ProposalOutcome[] = [];
  const changeTypeOf = (c: Checked): ChangeType => {
    const raw = proposals[c.index] as { changeType: ChangeType };
    return raw.changeType;
  };
  for (let i = 0; i < checked.length;) {
    const c = checked[i]!;
    if (c.kind === 'upsert' && c.ownership !== 'routed') {
      const run: Array<Extract<Checked, { kind: 'upsert' }>> = [];
      while (i < checked.length) {
        const next = checked[i]!;
        if (next.kind !== 'upsert' || next.ownership === 'routed') break;
        run.push(next);
        i++;
      }
      const items: EntityUpsert[] = run.map((u) => ({
        urn: u.urn,
        aspects: { [u.aspect]: u.value } as EntityUpsert['aspects'],
        ...(u.systemMetadata ? { systemMetadata: { [u.aspect]: u.systemMetadata } } : {}),
      }));
      try {
        await service.upsertMany(actor, items);
      } catch (error) {
        throw atProposal(
          error,
          at,
          run.map((u) => u.index),
          (k) => `${at(run[k]!.index)}/aspect/value`,
        );
      }
      for (const u of run) outcomes.push({ urn: u.urn, aspectName: u.aspect, changeType: changeTypeOf(u), changed: true });
      continue;
    }
    i++;
    try {
      outcomes.push(await applyOne(service, actor, c, changeTypeOf(c)));
    } catch (error) {
      throw atProposal(error, at, [c.index], () => `${at(c.index)}/aspect/value`);
    }
  }
  return outcomes;
}

async function applyOne(service: EntityService, actor: Actor, c: Checked, changeType: ChangeType): Promise<ProposalOutcome> {
  const outcome = (changed: boolean): ProposalOutcome => ({ urn: c.urn, aspectName: c.aspect, changeType, changed });
  switch (c.kind) {
    case 'key':
      return outcome(false);
    case 'row':
      await service.appendTimeseriesRow(actor, c.urn, c.aspect, c.row);
      return outcome(true);
    case 'upsert':
      await service.upsertAspect(actor, c.urn, c.aspect as AspectName, c.value as unknown as AspectMap[AspectName]);
      return outcome(true);
    case 'patch':
      await service.patchAspect(actor, c.urn, c.aspect, c.operations, c.arrayPrimaryKeys ? { arrayPrimaryKeys: c.arrayPrimaryKeys } : {});
      return outcome(true);
    case 'delete':
      if (c.key) {
        const [exists] = await service.readVisible([c.urn]);
        if (!exists) return outcome(false);
        await service.deleteEntity(actor, c.urn, { hard: true });
        return outcome(true);
      }
      return outcome(await service.deleteAspect(actor, c.urn, c.aspect));
  }
}

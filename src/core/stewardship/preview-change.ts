import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { breakingChanges, definitionContent, resolveVersion } from '../properties/definition-changes';
import { normalizeDraft, type DraftPaths } from '../properties/definition-rules';
import { readRestDefinition, restPaths } from '../properties/definition-shapes';
import { definitionInfoOf, type DefinitionInfo } from '../properties/lookup';
import { softDeletedMessage } from '../properties/messages';
import {
  DEFINITION_ASPECT,
  type DefinitionChangePreview,
  type PreviewChangeInput,
  type StructuredPropertyDefinition,
} from '../properties/types';
import { affectedByRules, heldUnderKey } from './affected-entities';

/**
 * The impact of a definition change before it is made: the same reading and checks as the real
 * upsert (same violations for bad input, same version and breaking-change rules), then counts of the
 * entities whose values the change would invalidate or hide, from the search index (never a scan of
 * every entity). Nothing is written.
 */

interface Wanted {
  urn: string;
  definition: StructuredPropertyDefinition;
  paths: DraftPaths;
}

/** `catalog.properties.previewChange`: one definition in the REST shape (`{ urn?, ...aspect }`). */
export async function previewDefinitionChange(ctx: CatalogContext, actor: Actor, input: unknown): Promise<DefinitionChangePreview> {
  await requireManager(ctx, actor);
  const violations: Violation[] = [];
  let urn: string | undefined;
  let aspect: unknown = input;
  if (input !== null && typeof input === 'object' && !Array.isArray(input) && 'urn' in input) {
    const { urn: given, ...rest } = input as Record<string, unknown>;
    if (typeof given === 'string') urn = given;
    else if (given !== undefined) violations.push({ path: '/urn', message: 'must be a string (a urn:li:structuredProperty:<id> URN)' });
    aspect = rest;
  }
  const paths = restPaths('');
  const draft = readRestDefinition(aspect, violations, { urn });
  const normalized = draft && normalizeDraft(draft, ctx.registry, paths, violations);
  throwIfViolations(violations, 'invalid structured property definition');
  const [preview] = await previewAll(ctx, [{ ...normalized!, paths }]);
  return preview!;
}

/**
 * `previewChange` for several definitions (item `i` reported under `/<i>`), all checked as
 * `catalog.properties.upsertMany` checks them. `prior[i]`: what a transport's decoder found in item `i`
 * (undefined there when it could not decode it), reported with these in one answer.
 */
export async function previewDefinitionChanges(
  ctx: CatalogContext,
  actor: Actor,
  inputs: ReadonlyArray<PreviewChangeInput | undefined>,
  prior: ReadonlyArray<readonly Violation[]> = [],
): Promise<DefinitionChangePreview[]> {
  await requireManager(ctx, actor);
  const violations: Violation[] = [];
  const wanted: Wanted[] = [];
  inputs.forEach((input, i) => {
    violations.push(...(prior[i] ?? []));
    if (input === undefined) return;
    const prefix = `/${i}`;
    let urn: string | undefined;
    let aspect: unknown = input;
    if (input !== null && typeof input === 'object' && !Array.isArray(input) && 'urn' in input) {
      const { urn: given, ...rest } = input as unknown as Record<string, unknown>;
      if (typeof given === 'string') urn = given;
      else if (given !== undefined)
        violations.push({ path: `${prefix}/urn`, message: 'must be a string (a urn:li:structuredProperty:<id> URN)' });
      aspect = rest;
    }
    const paths = restPaths(prefix);
    const draft = readRestDefinition(aspect, violations, { prefix, ...(urn !== undefined ? { urn } : {}) });
    const normalized = draft && normalizeDraft(draft, ctx.registry, paths, violations);
    if (!normalized) return;
    if (wanted.some((w) => w.urn === normalized.urn))
      violations.push({ path: `${prefix}/`, message: `${normalized.urn} is defined twice` });
    wanted.push({ ...normalized, paths });
  });
  throwIfViolations(violations, 'invalid structured property definition');
  return previewAll(ctx, wanted);
}

async function requireManager(ctx: CatalogContext, actor: Actor): Promise<void> {
  await ctx.authenticate(actor);
  await ctx.authorizer.require(actor, 'MANAGE_STRUCTURED_PROPERTIES');
}

async function previewAll(ctx: CatalogContext, wanted: readonly Wanted[]): Promise<DefinitionChangePreview[]> {
  const stored = await ctx.adapter.readEntities(
    wanted.map((w) => w.urn),
    [DEFINITION_ASPECT, 'status'],
  );
  const byUrn = new Map(stored.map((entity) => [entity.urn, definitionInfoOf(entity)]));
  // A soft-deleted property is refused as the upsert refuses it (it cannot be previewed: nothing is visible).
  const problems = wanted.flatMap((w) =>
    byUrn.get(w.urn)?.removed ? [{ path: w.paths.qualifiedName, message: softDeletedMessage(w.urn, 'updating its definition') }] : [],
  );
  if (problems.length) throw new CatalogError('INVALID_INPUT', 'refused structured property change', { details: problems });
  const out: DefinitionChangePreview[] = [];
  for (const w of wanted) out.push(await previewOne(ctx, w, byUrn.get(w.urn)));
  return out;
}

async function previewOne(ctx: CatalogContext, wanted: Wanted, stored: DefinitionInfo | undefined): Promise<DefinitionChangePreview> {
  const { urn, paths } = wanted;
  if (!stored) return { urn, outcome: 'created', breaking: false, reasons: [], affected: 0, sample: [] };
  const versionProblems: Violation[] = [];
  const storedVersion = stored.definition.version;
  const { version, bumped } = resolveVersion(storedVersion, wanted.definition.version, paths.version, versionProblems);
  const next: StructuredPropertyDefinition = { ...wanted.definition, ...(version !== undefined ? { version } : {}) };
  const changes = breakingChanges(stored.definition, next, paths);
  const reasons = changes.map((c) => sentence(c.message));
  reasons.push(...versionProblems.map((v) => sentence(v.message)));
  if (bumped) {
    reasons.push(
      `The version goes from ${storedVersion ?? '(none)'} to ${version!}: every value written under the current version is superseded (hidden at once, then removed in the background).`,
    );
  }
  const refused = versionProblems.length > 0 || (!bumped && changes.length > 0);
  if (refused && changes.length > 0 && !bumped) {
    reasons.push(
      `Without a version greater than ${storedVersion ?? 'the current one'} the change is refused; with one, it is applied and every value of the current version is hidden.`,
    );
  }
  const unchanged = !refused && definitionContent(next) === definitionContent(stored.definition);
  const outcome = refused ? 'refused' : unchanged ? 'unchanged' : 'updated';
  const breaking = changes.length > 0 || bumped;
  // Accepted with a new version: every holder's values are hidden. Otherwise: the values the new rules refuse.
  const found = bumped && !refused ? await heldUnderKey(ctx, stored) : await affectedByRules(ctx, stored, next, changes.length > 0);
  return { urn, outcome, breaking, reasons, affected: found.affected, sample: found.sample };
}

/** `removing the allowed value(s) "a"` → `Removing the allowed value(s) "a".` */
function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

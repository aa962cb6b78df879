import { applyPatch, type Operation } from 'rfc6902';
import type { JsonValue } from '../../adapter/types';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { checkSchema } from '../validation';
import { fromPropertyValue } from './definition-rules';
import { propertyUrnProblem, softDeletedMessage } from './messages';
import type { PropertyAssignment, PropertyPatchRequest, PropertyValue } from './types';
import type { AssignmentDraft } from './value-rules';
import { patchRequestSchema, restAssignmentSchema } from '../validation/schemas/structured-properties';

/**
 * JSON Patch (RFC 6902) on an entity's structured properties with `arrayPrimaryKeys: { properties:
 * ["propertyUrn"] }`: the list is addressed as a map keyed by property URN, so `/properties/<urn>`
 * names the element whose `propertyUrn` is that URN (RFC 6901 escaping: `~1` is `/`, `~0` is `~`;
 * everything else in the URN is taken literally). Removing a whole property the entity does not carry
 * is a no-op (set = remove then add). Operations run in order on a copy; the first that
 * fails stops the patch and nothing is written. A failed `test` is CONFLICT (the stored state is not
 * what the caller expected); every other failure is INVALID_INPUT.
 */

const OPS = ['add', 'remove', 'replace', 'test'] as const;
const PREFIX = '/properties/';

const unescapeToken = (token: string): string => token.replace(/~1/g, '/').replace(/~0/g, '~');
export const escapeToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** The property URN a patch path addresses, or a violation. */
function targetOf(path: string, where: string, violations: Violation[]): string | undefined {
  if (!path.startsWith(PREFIX)) {
    violations.push({ path: where, message: `"${path}" must address one property: /properties/<property urn>` });
    return undefined;
  }
  const token = path.slice(PREFIX.length).split('/')[0] ?? '';
  const urn = unescapeToken(token);
  const problem = propertyUrnProblem(urn);
  if (problem) {
    violations.push({ path: where, message: `"${path}" does not name a structured property: ${problem}` });
    return undefined;
  }
  return urn;
}

/** Whether a path names a whole property (`/properties/<urn>`), not a member inside it. */
function isWholeProperty(path: string): boolean {
  return path.startsWith(PREFIX) && !path.slice(PREFIX.length).includes('/');
}

const targetUrn = (path: string): string => unescapeToken(path.slice(PREFIX.length));

/** Reads the patch body: every operation checked before any is applied. */
function readRequest(request: unknown, softDeleted: ReadonlySet<string>): Operation[] {
  const violations = checkSchema(patchRequestSchema, request);
  throwIfViolations(violations, 'invalid structured properties patch');
  const { patch, arrayPrimaryKeys } = request as PropertyPatchRequest;
  if (arrayPrimaryKeys !== undefined) {
    const keys = Object.entries(arrayPrimaryKeys);
    const expected = keys.length === 1 && keys[0]![0] === 'properties' && JSON.stringify(keys[0]![1]) === '["propertyUrn"]';
    if (!expected)
      violations.push({
        path: '/arrayPrimaryKeys',
        message: 'must be { "properties": ["propertyUrn"] } (the only key structured properties have)',
      });
  }
  patch.forEach((op, i) => {
    if (!(OPS as readonly string[]).includes(op.op)) {
      violations.push({ path: `/patch/${i}/op`, message: `"${op.op}" is not supported; use one of ${OPS.join(', ')}` });
      return;
    }
    if (op.op !== 'remove' && !('value' in op)) violations.push({ path: `/patch/${i}/value`, message: `is required for ${op.op}` });
    const urn = targetOf(op.path, `/patch/${i}/path`, violations);
    if (urn && softDeleted.has(urn)) violations.push({ path: `/patch/${i}/path`, message: softDeletedMessage(urn, 'changing its values') });
  });
  throwIfViolations(violations, 'invalid structured properties patch');
  return patch as Operation[];
}

/** Applies the patch to the visible assignments; returns the wished-for list (checked by the caller against the definitions). */
export function applyPropertyPatch(
  visible: readonly PropertyAssignment[],
  request: unknown,
  softDeleted: ReadonlySet<string>,
): AssignmentDraft[] {
  const operations = readRequest(request, softDeleted);
  const byUrn: Record<string, { propertyUrn: string; values: PropertyValue[] }> = {};
  for (const a of visible)
    byUrn[a.propertyUrn] = { propertyUrn: a.propertyUrn, values: JSON.parse(JSON.stringify(a.values)) as PropertyValue[] };
  const document: { properties: Record<string, JsonValue> } = { properties: byUrn as unknown as Record<string, JsonValue> };
  operations.forEach((operation, i) => {
    // Removing a property the entity does not carry is a no-op: a client "sets" a property by removing
    // then adding it, whether or not it was set.
    if (operation.op === 'remove' && isWholeProperty(operation.path) && !Object.hasOwn(document.properties, targetUrn(operation.path)))
      return;
    const [failure] = applyPatch(document, [operation]);
    if (!failure) return;
    if (failure.name === 'TestError') {
      const { actual, expected } = failure as { actual?: unknown; expected?: unknown };
      const message = `test failed at ${operation.path}: found ${JSON.stringify(actual ?? null)}, expected ${JSON.stringify(expected ?? null)}`;
      throw new CatalogError('CONFLICT', `structured properties patch not applied: ${message}`, {
        details: [{ path: `/patch/${i}`, message }],
      });
    }
    const message =
      failure.name === 'MissingError'
        ? `${operation.path} does not exist on the entity`
        : `operation ${operation.op} on ${operation.path} cannot be applied`;
    throw new CatalogError('INVALID_INPUT', `structured properties patch not applied: ${message}`, {
      details: [{ path: `/patch/${i}`, message }],
    });
  });

  const violations: Violation[] = [];
  const drafts: AssignmentDraft[] = [];
  for (const [urn, entry] of Object.entries(document.properties)) {
    const path = `${PREFIX}${escapeToken(urn)}`;
    const candidate =
      entry && typeof entry === 'object' && !Array.isArray(entry) && !('propertyUrn' in entry) ? { ...entry, propertyUrn: urn } : entry;
    const found = checkSchema(restAssignmentSchema, candidate, path);
    if (found.length) {
      violations.push(...found);
      continue;
    }
    const assignment = candidate as unknown as PropertyAssignment;
    if (assignment.propertyUrn !== urn) {
      violations.push({ path: `${path}/propertyUrn`, message: `"${assignment.propertyUrn}" differs from the URN in the path (${urn})` });
      continue;
    }
    drafts.push({ propertyUrn: urn, values: assignment.values.map(fromPropertyValue), path, urnPath: path });
  }
  throwIfViolations(violations, 'the patched structured properties are not valid');
  return drafts;
}

import type { Catalog } from '../catalog';
import { withPaths, type Violation } from '../errors';
import type { Actor } from '../core/access';
import { checkSchema } from '../core/validation';
import {
  checkName,
  parseValueType,
  STRUCTURED_PROPERTY_ENTITY,
  yamlDefinitionSchema,
  type AllowedValue,
  type DefinitionChangePreview,
  type DefinitionUpsertResult,
  type PropertyDefinitionInput,
  type RestPropertyDefinitionInput,
  type YamlPropertyEntry,
} from '../core/properties';

/**
 * The command line's YAML file of definitions (snake_case keys, loosely typed scalars), decoded into the
 * canonical definition `catalog.properties` takes, and the way back from a canonical violation path to
 * the file's spelling. Nothing here decides what a definition means: it only translates. The one YAML
 * decoder: the server's `upsertStructuredPropertyDefinitions` / `previewStructuredPropertyDefinitions`
 * operations and the command line's embedded backend both use it (`metacatalog/http` exports it).
 */

const URN_PREFIX = `urn:li:${STRUCTURED_PROPERTY_ENTITY}:`;

/** YAML scalars are loosely typed: `30` for a string property is "30", "30" for a number property is 30. */
function looseValue(type: string | undefined, value: string | number): AllowedValue['value'] {
  if (type === 'number')
    return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))
      ? { double: Number(value) }
      : typeof value === 'number'
        ? { double: value }
        : { string: value };
  if (type !== undefined) return { string: String(value) };
  return typeof value === 'number' ? { double: value } : { string: value };
}

/** One entry at `prefix`: shape violations in the file's spelling; `idOnly` when the qualified name came from `id`. */
export function decodeYamlEntry(
  entry: unknown,
  prefix: string,
): { input?: PropertyDefinitionInput; violations: Violation[]; idOnly: boolean } {
  const violations = checkSchema(yamlDefinitionSchema, entry, prefix);
  if (violations.length) return { violations, idOnly: false };
  const y = entry as YamlPropertyEntry;
  if (y.urn !== undefined && y.qualified_name === undefined)
    violations.push({ path: `${prefix}/qualified_name`, message: 'is required when urn is given' });
  if (y.id !== undefined && y.qualified_name !== undefined) checkName(y.id, `${prefix}/id`, violations);
  if (y.id !== undefined && y.qualified_name !== undefined && y.id !== y.qualified_name)
    violations.push({
      path: `${prefix}/id`,
      message: `id "${y.id}" and qualified name "${y.qualified_name}" must match when both are given`,
    });
  // YAML files written for DataHub's CLI say `type: STRING`, `DATE`: its CLI lower-cases them, so do we.
  const valueType = /^[A-Z_]+$/.test(y.type) ? y.type.toLowerCase() : y.type;
  const type = parseValueType(valueType);
  const qualifiedName = y.qualified_name ?? (y.urn === undefined ? y.id : undefined);
  const value: RestPropertyDefinitionInput = {
    ...(qualifiedName !== undefined ? { qualifiedName } : {}),
    ...(y.display_name !== undefined ? { displayName: y.display_name } : {}),
    ...(y.description !== undefined ? { description: y.description } : {}),
    valueType,
    ...(y.type_qualifier ? { typeQualifier: { allowedTypes: y.type_qualifier.allowed_types } } : {}),
    ...(y.allowed_values
      ? {
          allowedValues: y.allowed_values.map((a) => ({
            value: looseValue(type, a.value),
            ...(a.description !== undefined ? { description: a.description } : {}),
          })),
        }
      : {}),
    ...(y.cardinality ? { cardinality: y.cardinality } : {}),
    entityTypes: y.entity_types,
    ...(y.immutable !== undefined ? { immutable: y.immutable } : {}),
    // 14-digit numbers are exact in a double; YAML users often leave the version unquoted.
    ...(y.version !== undefined ? { version: String(y.version) } : {}),
  };
  if (y.urn !== undefined && y.id !== undefined && y.urn.startsWith(URN_PREFIX) && y.urn.slice(URN_PREFIX.length) !== y.id)
    violations.push({ path: `${prefix}/id`, message: `id "${y.id}" does not match the URN ${y.urn}` });
  return {
    input: { ...(y.urn !== undefined ? { urn: y.urn } : {}), ...value },
    violations,
    idOnly: y.qualified_name === undefined && y.id !== undefined,
  };
}

const YAML_NAMES: ReadonlyArray<[string, string]> = [
  ['/qualifiedName', '/qualified_name'],
  ['/displayName', '/display_name'],
  ['/valueType', '/type'],
  ['/typeQualifier/allowedTypes', '/type_qualifier/allowed_types'],
  ['/typeQualifier', '/type_qualifier'],
  ['/allowedValues', '/allowed_values'],
  ['/entityTypes', '/entity_types'],
];

/** A canonical definition path in the YAML file (entries at `/<i>`, or none for a single entry). */
export function yamlDefinitionPath(
  idOnly: (index: number | undefined) => boolean,
  own: readonly Violation[] = [],
): (path: string) => string {
  // The decoder's own violations are in the file's spelling already.
  const decoderPaths = new Set(own.map((v) => v.path));
  return (path) => {
    if (decoderPaths.has(path)) return path;
    const m = /^(\/\d+)?(\/.*)?$/.exec(path);
    if (!m) return path;
    const [, at = '', rest = ''] = m;
    const index = at ? Number(at.slice(1)) : undefined;
    if (rest === '/qualifiedName' && idOnly(index)) return `${at}/id`;
    const hit = YAML_NAMES.find(([from]) => rest === from || rest.startsWith(`${from}/`));
    return hit ? `${at}${hit[1]}${rest.slice(hit[0].length)}` : path;
  };
}

/** The file's entries decoded (entry `i` at `/<i>`): canonical inputs, each entry's decoder violations, and the path map back. */
export function decodeYamlDefinitions(entries: readonly unknown[]): {
  inputs: Array<PropertyDefinitionInput | undefined>;
  prior: Violation[][];
  pathOf: (path: string) => string;
} {
  const decoded = entries.map((entry, i) => decodeYamlEntry(entry, `/${i}`));
  const pathOf = yamlDefinitionPath(
    (index) => index !== undefined && decoded[index]?.idOnly === true,
    decoded.flatMap((d) => d.violations),
  );
  return { inputs: decoded.map((d) => d.input), prior: decoded.map((d) => d.violations), pathOf };
}

/** The YAML file's entries through the canonical `catalog.properties.upsertMany` (one atomic commit), violations in the file's spelling. */
export async function upsertYamlDefinitions(
  catalog: Catalog,
  actor: Actor,
  entries: readonly unknown[],
): Promise<DefinitionUpsertResult[]> {
  const { inputs, prior, pathOf } = decodeYamlDefinitions(entries);
  return catalog.properties.upsertMany(actor, inputs, { prior }).catch((error: unknown) => {
    throw withPaths(error, pathOf);
  });
}

/** The YAML file's entries through the canonical `catalog.properties.previewChanges`, violations in the file's spelling. */
export async function previewYamlDefinitions(
  catalog: Catalog,
  actor: Actor,
  entries: readonly unknown[],
): Promise<DefinitionChangePreview[]> {
  const { inputs, prior, pathOf } = decodeYamlDefinitions(entries);
  return catalog.properties.previewChanges(actor, inputs, { prior }).catch((error: unknown) => {
    throw withPaths(error, pathOf);
  });
}

import type { AuditStamp, JsonObject, StoredEntity } from '../../adapter/types';
import type { Violation } from '../../errors';

/**
 * The `structuredPropertySettings` aspect of a structured property (DataHub's aspect of that name):
 * where the property is shown. Every flag defaults to false.
 */
export const SETTINGS_ASPECT = 'structuredPropertySettings';

const SETTINGS_FLAGS = [
  'isHidden',
  'showInSearchFilters',
  'showInAssetSummary',
  'hideInAssetSummaryWhenEmpty',
  'showAsAssetBadge',
  'showInColumnsTable',
] as const;
type SettingsFlag = (typeof SETTINGS_FLAGS)[number];

/** The settings as stored and read back: every flag set, and when they last changed. */
export type StructuredPropertySettings = Record<SettingsFlag, boolean> & { lastModified?: AuditStamp };

/** GraphQL `StructuredPropertySettingsInput`: the flags to set; absent or null ones keep their value. */
export type StructuredPropertySettingsInput = Partial<Record<SettingsFlag, boolean | null>>;

/** The flags a hidden property may not have (DataHub's rule: hidden means shown nowhere). */
const SHOWN_SOMEWHERE: readonly SettingsFlag[] = ['showInSearchFilters', 'showInAssetSummary', 'showAsAssetBadge', 'showInColumnsTable'];

/** The stored settings of a property entity, every flag filled in; undefined when it has none. */
export function settingsOf(entity: Pick<StoredEntity, 'aspects'> | undefined): StructuredPropertySettings | undefined {
  const value = entity?.aspects[SETTINGS_ASPECT]?.value;
  return value ? fillSettings(value) : undefined;
}

export function fillSettings(value: JsonObject): StructuredPropertySettings {
  const out: StructuredPropertySettings = {
    isHidden: value.isHidden === true,
    showInSearchFilters: value.showInSearchFilters === true,
    showInAssetSummary: value.showInAssetSummary === true,
    hideInAssetSummaryWhenEmpty: value.hideInAssetSummaryWhenEmpty === true,
    showAsAssetBadge: value.showAsAssetBadge === true,
    showInColumnsTable: value.showInColumnsTable === true,
  };
  const stamp = value.lastModified as AuditStamp | undefined;
  if (stamp && typeof stamp === 'object') out.lastModified = { time: stamp.time, actor: stamp.actor };
  return out;
}

/** The input applied over the current settings (or over all-false ones); unchanged flags keep their value. */
export function applySettingsInput(
  current: StructuredPropertySettings | undefined,
  input: StructuredPropertySettingsInput,
): StructuredPropertySettings {
  const next = { ...(current ?? fillSettings({})) };
  for (const flag of SETTINGS_FLAGS) {
    const given = input[flag];
    if (typeof given === 'boolean') next[flag] = given;
  }
  return next;
}

export function sameFlags(a: StructuredPropertySettings | undefined, b: StructuredPropertySettings): boolean {
  return a !== undefined && SETTINGS_FLAGS.every((flag) => a[flag] === b[flag]);
}

/** DataHub's rule: a hidden property is shown nowhere. One violation at `<path>/isHidden` naming the flags in the way. */
export function settingsViolations(settings: StructuredPropertySettings, path: string): Violation[] {
  if (!settings.isHidden) return [];
  const shown = SHOWN_SOMEWHERE.filter((flag) => settings[flag]);
  if (shown.length === 0) return [];
  return [
    { path: `${path}/isHidden`, message: `a hidden property cannot also be shown; set ${shown.join(', ')} to false, or isHidden to false` },
  ];
}

/** The settings aspect as stored, stamped. */
export function settingsToJson(settings: StructuredPropertySettings): JsonObject {
  const out: JsonObject = {};
  for (const flag of SETTINGS_FLAGS) out[flag] = settings[flag];
  if (settings.lastModified) out.lastModified = { time: settings.lastModified.time, actor: settings.lastModified.actor };
  return out;
}

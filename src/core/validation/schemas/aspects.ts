import type { JsonObject } from '../../../adapter/types';

/**
 * JSON schemas of the built-in aspects. Shapes follow the established metadata platform's aspects
 * (field names kept so existing clients work); unknown fields are refused so a typo is an error,
 * not silently stored data.
 */
const auditStamp: JsonObject = {
  type: 'object',
  properties: { time: { type: 'integer', minimum: 0 }, actor: { type: 'string' } },
  required: ['time', 'actor'],
  additionalProperties: false,
};

const stringMap: JsonObject = { type: 'object', additionalProperties: { type: 'string' } };

function infoAspect(extra: Record<string, JsonObject> = {}, required: string[] = []): JsonObject {
  return {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 1024 },
      description: { type: 'string', maxLength: 65536 },
      customProperties: stringMap,
      externalUrl: { type: 'string' },
      qualifiedName: { type: 'string' },
      created: auditStamp,
      lastModified: auditStamp,
      ...extra,
    },
    required,
    additionalProperties: false,
  };
}

export const statusSchema: JsonObject = {
  type: 'object',
  properties: { removed: { type: 'boolean' } },
  required: ['removed'],
  additionalProperties: false,
};

export const datasetPropertiesSchema = infoAspect({ uri: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } });
export const dataFlowInfoSchema = infoAspect({ project: { type: 'string' }, env: { type: 'string' } }, ['name']);
export const dataJobInfoSchema = infoAspect({ type: { type: 'string' }, flowUrn: { type: 'string' } }, ['name']);
export const chartInfoSchema = infoAspect({ title: { type: 'string' }, chartUrl: { type: 'string' } });
export const dashboardInfoSchema = infoAspect({ title: { type: 'string' }, dashboardUrl: { type: 'string' } });
export const containerPropertiesSchema = infoAspect({ env: { type: 'string' } }, ['name']);
export const glossaryTermInfoSchema = infoAspect({ definition: { type: 'string' }, termSource: { type: 'string' } });
export const corpUserInfoSchema = infoAspect({
  active: { type: 'boolean' },
  displayName: { type: 'string' },
  email: { type: 'string' },
  title: { type: 'string' },
  fullName: { type: 'string' },
});
export const corpGroupInfoSchema = infoAspect({ displayName: { type: 'string' }, email: { type: 'string' } });
export const dataPlatformInfoSchema = infoAspect({ displayName: { type: 'string' }, type: { type: 'string' } });

/** `structuredPropertySettings` of a structured property: where it is shown (every flag defaults to false). */
export const STRUCTURED_PROPERTY_SETTINGS_FLAGS: JsonObject = {
  isHidden: { type: 'boolean' },
  showInSearchFilters: { type: 'boolean' },
  showInAssetSummary: { type: 'boolean' },
  hideInAssetSummaryWhenEmpty: { type: 'boolean' },
  showAsAssetBadge: { type: 'boolean' },
  showInColumnsTable: { type: 'boolean' },
};

export const structuredPropertySettingsSchema: JsonObject = {
  type: 'object',
  properties: { ...STRUCTURED_PROPERTY_SETTINGS_FLAGS, lastModified: auditStamp },
  additionalProperties: false,
};

/** Value of one structured property on an entity, as stored: `{ string }` or `{ double }`. */
export const structuredPropertiesSchema: JsonObject = {
  type: 'object',
  properties: {
    properties: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          propertyUrn: { type: 'string' },
          values: {
            type: 'array',
            items: {
              type: 'object',
              oneOf: [
                { properties: { string: { type: 'string' } }, required: ['string'], additionalProperties: false },
                { properties: { double: { type: 'number' } }, required: ['double'], additionalProperties: false },
              ],
            },
          },
          created: auditStamp,
          lastModified: auditStamp,
        },
        required: ['propertyUrn', 'values'],
        additionalProperties: false,
      },
    },
  },
  required: ['properties'],
  additionalProperties: false,
};

/** Timeseries aspects: every row has `timestampMillis`; the rest is free-form but typed where known. */
function timeseriesAspect(extra: Record<string, JsonObject> = {}): JsonObject {
  return {
    type: 'object',
    properties: {
      timestampMillis: { type: 'integer', minimum: 0 },
      eventGranularity: { type: 'object' },
      partitionSpec: { type: 'object' },
      messageId: { type: 'string' },
      ...extra,
    },
    required: ['timestampMillis'],
    additionalProperties: true,
  };
}

export const datasetProfileSchema = timeseriesAspect({
  rowCount: { type: 'integer' },
  columnCount: { type: 'integer' },
  sizeInBytes: { type: 'integer' },
  fieldProfiles: { type: 'array' },
});
export const datasetUsageStatisticsSchema = timeseriesAspect({
  uniqueUserCount: { type: 'integer' },
  totalSqlQueries: { type: 'integer' },
  topSqlQueries: { type: 'array', items: { type: 'string' } },
  userCounts: { type: 'array' },
  fieldCounts: { type: 'array' },
});
export const operationSchema = timeseriesAspect({
  operationType: { type: 'string' },
  lastUpdatedTimestamp: { type: 'integer' },
  actor: { type: 'string' },
  numAffectedRows: { type: 'integer' },
});
export const chartUsageStatisticsSchema = timeseriesAspect({ viewsCount: { type: 'integer' }, uniqueUserCount: { type: 'integer' } });
export const dashboardUsageStatisticsSchema = timeseriesAspect({
  viewsCount: { type: 'integer' },
  executionsCount: { type: 'integer' },
  uniqueUserCount: { type: 'integer' },
});

/** A free-form object: for aspects whose shape the domain service that owns them validates. */
export const domainValidatedSchema: JsonObject = { type: 'object' };

import type { JsonObject } from '../../../adapter/types';

/** Epoch milliseconds: a whole number from 0 up to the largest exact integer. */
const epochMillis: JsonObject = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
/** The same schema, also allowing `null` (JSON clients send it for "not given"). */
const nullable = (schema: JsonObject): JsonObject => ({ ...schema, type: [schema.type as string, 'null'] });

/** Input of `catalog.timeseries.truncate` (and of `POST /operations?action=truncateTimeseriesAspect`). `null` means "not given". */
export const truncateInputSchema: JsonObject = {
  type: 'object',
  properties: {
    entityType: { type: 'string', minLength: 1 },
    aspect: { type: 'string', minLength: 1 },
    endTimeMillis: epochMillis,
    olderThanMillis: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    dryRun: nullable({ type: 'boolean' }),
    batchSize: nullable({ type: 'integer', minimum: 1, maximum: 1_000_000 }),
    timeoutSeconds: nullable({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    forceDeleteByQuery: nullable({ type: 'boolean' }),
    forceReindex: nullable({ type: 'boolean' }),
  },
  required: ['entityType', 'aspect'],
  additionalProperties: false,
};

/** Input of `catalog.timeseries.query` (and of `GET /openapi/v2/timeseries/{entityName}/{aspectName}`). */
export const timeseriesQueryInputSchema: JsonObject = {
  type: 'object',
  properties: {
    urn: { type: 'string', minLength: 1 },
    entityType: { type: 'string', minLength: 1 },
    aspect: { type: 'string', minLength: 1 },
    startTimeMillis: nullable(epochMillis),
    endTimeMillis: nullable(epochMillis),
    count: nullable({ type: 'integer', minimum: 1, maximum: 10_000 }),
    scrollId: nullable({ type: 'string', minLength: 1 }),
  },
  required: ['aspect'],
  additionalProperties: false,
};

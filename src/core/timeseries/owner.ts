import type { JsonObject } from '../../adapter/types';
import { timeseriesIndexRef } from '../../adapter/timeseries-index';
import type { DomainOwners } from '../entities/owner';
import type { EntityRegistry } from '../entities/registry';
import { rowViolations } from './input';

/**
 * What the timeseries domain owns: every timeseries aspect. A write of one in any batch appends its
 * value as a row (checked as `catalog.timeseries.append` checks it) in the same commit as the batch;
 * rows are never patched nor deleted one by one. A write needs EDIT_ENTITY, as an append does.
 */
export function timeseriesOwners(registry: EntityRegistry): DomainOwners {
  return {
    aspects: [
      {
        name: 'timeseries',
        governs: (_entityType, aspect) => registry.hasAspect(aspect) && registry.aspect(aspect).timeseries === true,
        privilege: () => 'EDIT_ENTITY',
        async prepare(_principal, items, violations) {
          for (const item of items) {
            if (item.op === 'upsert') violations.push(...rowViolations(registry, item.aspect, item.value, item.path));
            else {
              const verb = item.op === 'patch' ? 'patched' : 'deleted one by one';
              violations.push({ path: item.path, message: `"${item.aspect}" is a timeseries aspect: rows are appended, never ${verb}` });
            }
          }
          return {
            plan(item) {
              const value = item.value as JsonObject;
              const row = { urn: item.urn, timestampMillis: value.timestampMillis as number, value };
              return { rows: { index: timeseriesIndexRef(item.entityType, item.aspect), rows: [row] } };
            },
          };
        },
      },
    ],
  };
}

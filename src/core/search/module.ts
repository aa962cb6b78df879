import type { DomainModule, DomainParts } from '../module';
import type { StructuredPropertyService } from '../properties/service';
import type { FilterFieldSource } from '../properties/types';
import { createSearchService, type SearchService } from './service';

/** The search domain: `catalog.search` over the adapter's index, with the properties domain's filter fields. */
export const searchModule: DomainModule<
  DomainParts<{ properties: StructuredPropertyService; filterFields: FilterFieldSource }, SearchService>
> = {
  name: 'search',
  build: (ctx) => ({
    createService: ({ properties, filterFields }) => createSearchService(ctx, properties, filterFields),
  }),
};

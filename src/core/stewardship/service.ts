import type { CatalogContext } from '../context';
import type { StructuredPropertyService, StewardshipMembers } from '../properties';
import { previewDefinitionChange, previewYamlDefinitionChanges } from './preview-change';

/** The members of `catalog.properties` this domain brings (see `StewardshipMembers`). */
export function createStewardship(ctx: CatalogContext): Pick<StructuredPropertyService, StewardshipMembers> {
  return {
    previewChange: (actor, input) => previewDefinitionChange(ctx, actor, input),
    previewYamlEntries: (actor, entries) => previewYamlDefinitionChanges(ctx, actor, entries),
  };
}

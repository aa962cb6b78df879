import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import type { DefinitionChangePreview, PreviewChangeInput, YamlPropertyEntry } from '../properties/types';
import { previewDefinitionChange, previewYamlDefinitionChanges } from './preview-change';

/** The previews of definition changes that `catalog.properties` carries. */
export interface DefinitionChangePreviews {
  /**
   * What writing this definition (the `propertyDefinition` aspect, REST shape, with its `urn`) would
   * do: whether it is breaking and why, how many entities hold values it would invalidate or hide, a
   * sample of them. Needs MANAGE_STRUCTURED_PROPERTIES; bad input is refused as the upsert refuses it;
   * nothing is written.
   */
  previewChange(actor: Actor, input: PreviewChangeInput): Promise<DefinitionChangePreview>;
  /** `previewChange` for each entry of the command-line file (YAML keys), every entry checked first. */
  previewYamlEntries(actor: Actor, entries: readonly YamlPropertyEntry[]): Promise<DefinitionChangePreview[]>;
}

export function createStewardship(ctx: CatalogContext): DefinitionChangePreviews {
  return {
    previewChange: (actor, input) => previewDefinitionChange(ctx, actor, input),
    previewYamlEntries: (actor, entries) => previewYamlDefinitionChanges(ctx, actor, entries),
  };
}

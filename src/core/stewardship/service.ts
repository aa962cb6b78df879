import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import type { Violation } from '../../errors';
import type { DefinitionChangePreview, PreviewChangeInput } from '../properties/types';
import { previewDefinitionChange, previewDefinitionChanges } from './preview-change';

/** The previews of definition changes that `catalog.properties` carries. */
export interface DefinitionChangePreviews {
  /**
   * What writing this definition (the `propertyDefinition` aspect, REST shape, with its `urn`) would
   * do: whether it is breaking and why, how many entities hold values it would invalidate or hide, a
   * sample of them. Needs MANAGE_STRUCTURED_PROPERTIES; bad input is refused as the upsert refuses it;
   * nothing is written.
   */
  previewChange(actor: Actor, input: PreviewChangeInput): Promise<DefinitionChangePreview>;
  /**
   * `previewChange` for several definitions (item `i` reported under `/<i>`), every one checked first.
   * `prior[i]`: what a transport's decoder found in item `i` (undefined there when it could not decode it).
   */
  previewChanges(
    actor: Actor,
    inputs: ReadonlyArray<PreviewChangeInput | undefined>,
    options?: { prior?: ReadonlyArray<readonly Violation[]> },
  ): Promise<DefinitionChangePreview[]>;
}

export function createStewardship(ctx: CatalogContext): DefinitionChangePreviews {
  return {
    previewChange: (actor, input) => previewDefinitionChange(ctx, actor, input),
    previewChanges: (actor, inputs, options = {}) => previewDefinitionChanges(ctx, actor, inputs, options.prior),
  };
}

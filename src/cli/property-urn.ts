import { formatUrn, isCatalogError } from '../index';
import { UsageError } from './io';

/** `--urn` of the property commands: a URN as it is, or a bare id / qualified name made into `urn:li:structuredProperty:<id>`. */
export function propertyUrnOf(text: string): string {
  if (text.startsWith('urn:')) return text;
  try {
    return formatUrn('structuredProperty', text);
  } catch (error) {
    if (isCatalogError(error)) throw new UsageError(`--urn must be a structured property URN or id, got "${text}"`);
    throw error;
  }
}

import { entityTypeOf, isUrn } from '../index';
import { UsageError } from './io';

/** `--urn` of the property commands: a structured property URN, or a bare id / qualified name made into `urn:li:structuredProperty:<id>`. */
export function propertyUrnOf(text: string): string {
  const urn = text.startsWith('urn:') ? text : `urn:li:structuredProperty:${text}`;
  if (!isUrn(urn) || entityTypeOf(urn) !== 'structuredProperty') {
    throw new UsageError(`--urn must be a structured property URN (urn:li:structuredProperty:<name>) or its name, got "${text}"`);
  }
  return urn;
}

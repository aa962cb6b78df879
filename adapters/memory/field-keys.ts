import type { SearchField } from '../../src/adapter/types';

/** The index key of a standard field or of a property under one definition key. */
export function fieldKeyOf(field: Extract<SearchField, { kind: 'field' | 'property' }>): string {
  return field.kind === 'field' ? standardFieldKey(field.name) : propertyKey(field.propertyUrn, field.definitionKey);
}

/**
 * Keys built once and reused: every indexed document names the same few fields, and a key built
 * afresh is a new string to hash per field per write. Bounded: cleared when full.
 */
const KEY_CACHE_LIMIT = 10_000;
const standardKeys = new Map<string, string>();
const propertyKeys = new Map<string, Map<string, string>>();
let propertyKeyCount = 0;

export function standardFieldKey(name: string): string {
  let key = standardKeys.get(name);
  if (key === undefined) {
    key = `f\u0000${name}`;
    if (standardKeys.size >= KEY_CACHE_LIMIT) standardKeys.clear();
    standardKeys.set(name, key);
  }
  return key;
}

export function propertyKey(propertyUrn: string, definitionKey: string): string {
  let byDefinition = propertyKeys.get(propertyUrn);
  let key = byDefinition?.get(definitionKey);
  if (key === undefined) {
    key = `p\u0000${propertyUrn}\u0000${definitionKey}`;
    if (propertyKeyCount >= KEY_CACHE_LIMIT) {
      propertyKeys.clear();
      propertyKeyCount = 0;
      byDefinition = undefined;
    }
    if (byDefinition === undefined) {
      byDefinition = new Map();
      propertyKeys.set(propertyUrn, byDefinition);
    }
    byDefinition.set(definitionKey, key);
    propertyKeyCount += 1;
  }
  return key;
}

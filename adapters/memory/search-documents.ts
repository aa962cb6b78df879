import type { SearchDocument } from '../../src/adapter/types';
import { SortedStrings } from './sorted-strings';
import type { UndoLog } from './undo-log';

/** Told about every change of the document map, including those an undo makes. */
export type SearchDocumentListener = (urn: string, document: SearchDocument | undefined) => void;

/**
 * Which entities carry values of one structured property, by definition key. An entity carries
 * values under more than one key only between a definition's new version and the clean-up of the
 * old values; counting over every key then merges the lists (no URN → count map kept for it).
 */
interface PropertyIndex {
  readonly urnsByKey: Map<string, SortedStrings>;
}

/**
 * The search documents by URN (private copies, never handed out) and a per-property index, so the
 * clean-up questions about structured property values do not scan every document.
 */
export class SearchDocumentStore {
  private readonly byUrn = new Map<string, SearchDocument>();
  private readonly properties = new Map<string, PropertyIndex>();

  constructor(private readonly onChange: SearchDocumentListener) {}

  /** Read-only view for the search engine. */
  get documents(): ReadonlyMap<string, SearchDocument> {
    return this.byUrn;
  }

  /** Replaces (a private copy of `document`) or removes (undefined) the document of `urn`. */
  set(urn: string, document: SearchDocument | undefined, log: UndoLog): void {
    const previous = this.byUrn.get(urn);
    if (previous === undefined && document === undefined) return;
    const next = document === undefined ? undefined : copySearchDocument(document);
    this.swap(urn, previous, next);
    log.record(() => this.swap(urn, next, previous));
  }

  findEntitiesWithPropertyValues(request: {
    propertyUrn: string;
    keepDefinitionKey?: string;
    afterUrn?: string;
    limit: number;
  }): string[] {
    const index = this.properties.get(request.propertyUrn);
    if (!index || request.limit <= 0) return [];
    // The first `limit` URNs of the union are among the first `limit` of each key's list.
    const candidates = new Set<string>();
    for (const [key, urns] of index.urnsByKey) {
      if (key === request.keepDefinitionKey) continue;
      for (const urn of urns.pageAfter(request.afterUrn, request.limit)) candidates.add(urn);
    }
    return [...candidates].sort(compareCodeUnits).slice(0, request.limit);
  }

  countEntitiesWithPropertyValues(propertyUrn: string, definitionKey?: string): number {
    const index = this.properties.get(propertyUrn);
    if (!index) return 0;
    if (definitionKey === undefined) {
      if (index.urnsByKey.size === 1) return index.urnsByKey.values().next().value!.size;
      const urns = new Set<string>();
      for (const list of index.urnsByKey.values()) for (const urn of list.valuesAfter(undefined)) urns.add(urn);
      return urns.size;
    }
    return index.urnsByKey.get(definitionKey)?.size ?? 0;
  }

  private swap(urn: string, current: SearchDocument | undefined, next: SearchDocument | undefined): void {
    if (current) this.unindex(urn, current);
    if (next) {
      this.byUrn.set(urn, next);
      this.index(urn, next);
    } else {
      this.byUrn.delete(urn);
    }
    this.onChange(urn, next);
  }

  private index(urn: string, document: SearchDocument): void {
    for (const property of document.properties) {
      if (property.values.length === 0) continue;
      let index = this.properties.get(property.propertyUrn);
      if (!index) {
        index = { urnsByKey: new Map() };
        this.properties.set(property.propertyUrn, index);
      }
      let urns = index.urnsByKey.get(property.definitionKey);
      if (!urns) {
        urns = new SortedStrings();
        index.urnsByKey.set(property.definitionKey, urns);
      }
      urns.add(urn);
    }
  }

  private unindex(urn: string, document: SearchDocument): void {
    for (const property of document.properties) {
      const index = this.properties.get(property.propertyUrn);
      const urns = index?.urnsByKey.get(property.definitionKey);
      if (!index || !urns || !urns.delete(urn)) continue;
      if (urns.size === 0) index.urnsByKey.delete(property.definitionKey);
      if (index.urnsByKey.size === 0) this.properties.delete(property.propertyUrn);
    }
  }
}

/** A private deep copy (`fromEntries` keeps a field called `__proto__` an ordinary key). */
function copySearchDocument(document: SearchDocument): SearchDocument {
  const { text } = document;
  return {
    urn: document.urn,
    entityType: document.entityType,
    removed: document.removed,
    text: {
      urnKey: text.urnKey,
      ...(text.name === undefined ? {} : { name: text.name }),
      ...(text.description === undefined ? {} : { description: text.description }),
    },
    fields: Object.fromEntries(Object.entries(document.fields).map(([name, values]) => [name, [...values]])),
    properties: document.properties.map((property) => ({
      propertyUrn: property.propertyUrn,
      definitionKey: property.definitionKey,
      values: [...property.values],
    })),
  };
}

/** Code-unit order, as SQLite's BINARY collation (never `localeCompare`). */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

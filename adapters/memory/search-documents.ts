import type { SearchDocument } from '../../src/adapter/types';
import type { UndoLog } from './undo-log';

/** Told about every change of the document map, including those an undo makes. */
export type SearchDocumentListener = (urn: string, document: SearchDocument | undefined) => void;

/**
 * The search documents by URN (private copies, never handed out). The search engine indexes them
 * (it is told about every change) and answers every question about them.
 */
export class SearchDocumentStore {
  private readonly byUrn = new Map<string, SearchDocument>();

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
    this.swap(urn, next);
    log.record(() => this.swap(urn, previous));
  }

  private swap(urn: string, next: SearchDocument | undefined): void {
    if (next) this.byUrn.set(urn, next);
    else this.byUrn.delete(urn);
    this.onChange(urn, next);
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

import type { Actor } from './access/actor';
import type { StorageAdapter } from '../adapter/types';
import type { Authorizer } from './access/authorization';
import type { EntityRegistry } from './entities/registry';
import type { JobRunner } from './jobs/runner';

/** What every domain service shares. Built once by `createCatalog`. */
export interface CatalogContext {
  readonly adapter: StorageAdapter;
  readonly registry: EntityRegistry;
  readonly clock: () => number;
  readonly authorizer: Authorizer;
  readonly jobs: JobRunner;
  /** Waits until the adapter is open, then checks that an actor was given (UNAUTHENTICATED otherwise). */
  authenticate(actor: unknown): Promise<string>;
  /** `authenticate`, then the actor as the authorizer takes it (a plain URN, or a scoped actor with its scopes). */
  principal(actor: unknown): Promise<Actor>;
  /** Reports an unexpected error from background work (never thrown at a caller). */
  reportError(error: unknown, where: string): void;
}

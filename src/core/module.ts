import type { CatalogContext } from './context';
import type { DomainOwners } from './entities/owner';
import type { GiveUpHandler, JobHandler } from './jobs/runner';

/** A background job a domain declares: its handler, and what to record when it gives up. */
interface DeclaredJob {
  run: JobHandler;
  onGiveUp?: GiveUpHandler;
}

/** Job handlers by job type. */
export type DeclaredJobs = Readonly<Record<string, DeclaredJob>>;

/**
 * One domain as `createCatalog` composes it, from the domain's module value (`<domain>/module.ts`):
 * `build(ctx)` gives what the domain owns and reads at once (its aspect owners, handed to the one write
 * pipeline; read functions other domains use), and how to make its service once what it depends on
 * exists (the pipeline first). Its background jobs are declared, never registered by the domain itself:
 * `createCatalog` registers every domain's `jobs` on the one job runner.
 */
export interface DomainParts<Deps, Service> {
  /** The aspects and entity types the domain governs, and what readers see of them. */
  readonly owners?: DomainOwners;
  createService(deps: Deps): Service;
  /** The domain's job handlers, given its service (their work is the service's). */
  jobs?(service: Service, deps: Deps): DeclaredJobs;
}

export interface DomainModule<Parts> {
  readonly name: string;
  build(ctx: CatalogContext): Parts;
}

import type { DomainModule, DomainParts } from '../module';
import { AccessService } from './explain';
import { policyDeleter, policyOwners } from './owner';
import { PolicyService, type PolicyWritePath } from './policies';

/** The access domain as createCatalog composes it (the authorizer itself is part of the catalog's context). */
export interface AccessParts extends DomainParts<{ pipeline: PolicyWritePath }, PolicyService> {
  deleter(service: PolicyService): ReturnType<typeof policyDeleter>;
  /** `catalog.access`: why an actor may or may not do something (reads only, through the authorizer's state). */
  createAccess(): AccessService;
}

/** The access domain: the owner of stored policies, `catalog.policies` and `catalog.access`. */
export const accessModule: DomainModule<AccessParts> = {
  name: 'access',
  build: (ctx) => ({
    owners: policyOwners((entityType) => ctx.registry.hasEntityType(entityType)),
    createService: ({ pipeline }) => new PolicyService(ctx, pipeline),
    deleter: (service) => policyDeleter(service),
    createAccess: () => new AccessService(ctx),
  }),
};

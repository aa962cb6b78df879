import type { DomainModule, DomainParts } from '../module';
import { policyDeleter, policyOwners } from './owner';
import { PolicyService, type PolicyWritePath } from './policies';

/** The access domain as createCatalog composes it (the authorizer itself is part of the catalog's context). */
export interface AccessParts extends DomainParts<{ pipeline: PolicyWritePath }, PolicyService> {
  deleter(service: PolicyService): ReturnType<typeof policyDeleter>;
}

/** The access domain: the owner of stored policies and `catalog.policies`. */
export const accessModule: DomainModule<AccessParts> = {
  name: 'access',
  build: (ctx) => ({
    owners: policyOwners(),
    createService: ({ pipeline }) => new PolicyService(ctx, pipeline),
    deleter: (service) => policyDeleter(service),
  }),
};

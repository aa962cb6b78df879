import type { WritePipeline } from '../entities/write-pipeline';
import type { DomainModule, DomainParts } from '../module';
import { ServiceAccountService, serviceAccountOwners } from './service-accounts';

/** The service accounts as createCatalog composes them. */
export type ServiceAccountsParts = DomainParts<{ pipeline: WritePipeline }, ServiceAccountService>;

/** Service accounts: the owner of their records (`serviceAccountInfo`) and `catalog.serviceAccounts`. */
export const serviceAccountsModule: DomainModule<ServiceAccountsParts> = {
  name: 'serviceAccounts',
  build: (ctx) => ({
    owners: serviceAccountOwners(),
    createService: ({ pipeline }) => new ServiceAccountService(ctx, pipeline),
  }),
};

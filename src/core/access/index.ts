// The public face of the access domain: what transports, the test kit and the package root use.
export { Authorizer, requireActor } from './authorization';
export type { StaticPolicy, StoredPolicy } from './authorization';
export { PolicyService } from './policies';
export type { CreatePolicyInput, Policies, PolicyActorsInput, PolicyList, PolicyState, UpdatePolicyInput } from './policies';
export { PRIVILEGES, PRIVILEGE_DESCRIPTIONS, isPrivilege } from './privileges';
export type { Privilege } from './privileges';
export { READ_ONLY, actorUrn, isScopedActor } from './actor';
export type { Actor, ScopedActor } from './actor';
export { policyDeleter, policyOwners } from './owner';
export { accessModule } from './module';

// The public face of the access domain: what transports, the test kit and the package root use.
export { Authorizer, requireActor } from './authorization';
export type { StaticPolicy, StoredPolicy } from './authorization';
export type {
  CreatePolicyInput,
  ListPoliciesInput,
  Policies,
  PolicyActorsInput,
  PolicyList,
  PolicyState,
  UpdatePolicyInput,
} from './policies';
export { PRIVILEGES, PRIVILEGE_DESCRIPTIONS, isPrivilege } from './privileges';
export type { Privilege } from './privileges';
export { READ_ONLY, actorUrn, isScopedActor } from './actor';
export type { Actor, ScopedActor } from './actor';
export { accessModule } from './module';
export type { Access, AccessExplanation, ExplainAccessInput, GrantedPrivilegesInput } from './explain';
export type { CriterionCondition, PolicyCriterion, PolicyResources, PolicyType } from './policy-model';
export type { ServiceAccount } from './service-account-model';

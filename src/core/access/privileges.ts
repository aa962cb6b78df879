/** The privileges of docs/tokens-and-policies.md, and MANAGE_SYSTEM_OPERATIONS (reindex through a transport). A refusal names the missing one. */
export const PRIVILEGES = [
  'GENERATE_PERSONAL_ACCESS_TOKENS',
  'MANAGE_ACCESS_TOKENS',
  'MANAGE_STRUCTURED_PROPERTIES',
  'EDIT_ENTITY_PROPERTIES',
  'EDIT_ENTITY',
  'GET_TIMESERIES_INDEX_SIZES',
  'TRUNCATE_TIMESERIES_INDEX',
  'MANAGE_POLICIES',
  'MANAGE_SYSTEM_OPERATIONS',
  'VIEW_CHANGE_FEED',
  'VIEW_TOKEN_REVOCATIONS',
  'MANAGE_SERVICE_ACCOUNTS',
] as const;

export type Privilege = (typeof PRIVILEGES)[number];

export const PRIVILEGE_DESCRIPTIONS: Readonly<Record<Privilege, string>> = {
  GENERATE_PERSONAL_ACCESS_TOKENS: "create, list and revoke one's own access tokens",
  MANAGE_ACCESS_TOKENS: 'create, list and revoke access tokens of any actor',
  MANAGE_STRUCTURED_PROPERTIES: 'create, update, delete and restore structured property definitions',
  EDIT_ENTITY_PROPERTIES: 'set, remove and patch structured property values on entities',
  EDIT_ENTITY: 'write or delete aspects and entities',
  GET_TIMESERIES_INDEX_SIZES: 'read the sizes of timeseries indices',
  TRUNCATE_TIMESERIES_INDEX: 'truncate timeseries indices',
  MANAGE_POLICIES: 'store, change and delete access policies',
  MANAGE_SYSTEM_OPERATIONS: 'run system operations such as rebuilding the search documents (system-update --reindex)',
  VIEW_CHANGE_FEED: 'read and follow the change feed of every entity (docs/changes.md)',
  VIEW_TOKEN_REVOCATIONS:
    'read the ids of revoked access tokens that have not expired (a deny-list for services that verify tokens themselves)',
  MANAGE_SERVICE_ACCOUNTS: 'create, list, disable, enable and remove service accounts',
};

export function isPrivilege(value: unknown): value is Privilege {
  return typeof value === 'string' && (PRIVILEGES as readonly string[]).includes(value);
}

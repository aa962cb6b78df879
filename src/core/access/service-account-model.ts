/**
 * A service account: a named, non-human actor (`urn:li:corpuser:service_<id>`) that holds tokens and
 * that policies name like a user. Its record is the `serviceAccountInfo` aspect of that corpuser,
 * written only by `catalog.serviceAccounts`.
 */
export const SERVICE_ACCOUNT_ASPECT = 'serviceAccountInfo';
export const SERVICE_ACCOUNT_PREFIX = 'urn:li:corpuser:service_';
/** Every stored service account with its record. */
export const SERVICE_ACCOUNT_SCAN = {
  entityType: 'corpuser',
  requireAspect: SERVICE_ACCOUNT_ASPECT,
  aspectNames: [SERVICE_ACCOUNT_ASPECT],
} as const;

export interface ServiceAccount {
  urn: string;
  id: string;
  displayName: string | null;
  description: string | null;
  disabled: boolean;
  createdAt: number;
  createdBy: string;
  /** When it was last disabled (null: never, or enabled since). */
  disabledAt: number | null;
}

/**
 * Entity types and data types are entities of the platform, named by URN: `urn:li:entityType:datahub.<type>`
 * and `urn:li:dataType:datahub.<value type>` (the value types of structured properties).
 */
export const VALUE_TYPE_NAMES = ['string', 'rich_text', 'number', 'date', 'urn'] as const;
export const ENTITY_TYPE_URN_PREFIX = 'urn:li:entityType:datahub.';

/** The metadata policy the access command tests create: ana may edit the `finance.*` properties of finance datasets. */
export const FINANCE_POLICY_YAML = `
name: finance stewards
type: METADATA
privileges: [EDIT_ENTITY_PROPERTIES]
actors: { users: ['urn:li:corpuser:ana'] }
resources:
  type: dataset
  filter:
    criteria:
      - { field: structuredProperties.finance.domain, condition: EQUALS, values: [finance] }
  properties: ['finance.*']
`;

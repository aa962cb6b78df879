/**
 * The Pegasus class name of each aspect, as DataHub's Rest.li answers key an aspect by it
 * (`{ "aspect": { "com.linkedin.structured.StructuredPropertyDefinition": {...} } }`). An aspect a host
 * registers without one here is keyed by its own name.
 */
const CLASSES: Readonly<Record<string, string>> = {
  status: 'com.linkedin.common.Status',
  structuredProperties: 'com.linkedin.structured.StructuredProperties',
  propertyDefinition: 'com.linkedin.structured.StructuredPropertyDefinition',
  datasetProperties: 'com.linkedin.dataset.DatasetProperties',
  dataFlowInfo: 'com.linkedin.datajob.DataFlowInfo',
  dataJobInfo: 'com.linkedin.datajob.DataJobInfo',
  chartInfo: 'com.linkedin.chart.ChartInfo',
  dashboardInfo: 'com.linkedin.dashboard.DashboardInfo',
  containerProperties: 'com.linkedin.container.ContainerProperties',
  glossaryTermInfo: 'com.linkedin.glossary.GlossaryTermInfo',
  corpUserInfo: 'com.linkedin.identity.CorpUserInfo',
  corpGroupInfo: 'com.linkedin.identity.CorpGroupInfo',
  dataPlatformInfo: 'com.linkedin.dataplatform.DataPlatformInfo',
  policyInfo: 'com.linkedin.policy.DataHubPolicyInfo',
  datasetKey: 'com.linkedin.metadata.key.DatasetKey',
  dataFlowKey: 'com.linkedin.metadata.key.DataFlowKey',
  dataJobKey: 'com.linkedin.metadata.key.DataJobKey',
  chartKey: 'com.linkedin.metadata.key.ChartKey',
  dashboardKey: 'com.linkedin.metadata.key.DashboardKey',
  containerKey: 'com.linkedin.metadata.key.ContainerKey',
  schemaFieldKey: 'com.linkedin.metadata.key.SchemaFieldKey',
  glossaryTermKey: 'com.linkedin.metadata.key.GlossaryTermKey',
  corpUserKey: 'com.linkedin.metadata.key.CorpUserKey',
  corpGroupKey: 'com.linkedin.metadata.key.CorpGroupKey',
  dataPlatformKey: 'com.linkedin.metadata.key.DataPlatformKey',
  structuredPropertyKey: 'com.linkedin.structured.StructuredPropertyKey',
  entityTypeKey: 'com.linkedin.metadata.key.EntityTypeKey',
  dataTypeKey: 'com.linkedin.metadata.key.DataTypeKey',
};

export function pegasusClassOf(aspectName: string): string {
  return CLASSES[aspectName] ?? aspectName;
}

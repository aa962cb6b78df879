import { defineGroup } from '../define-command';
import { propertiesExportValuesCommand } from './properties-export-values';
import { propertiesGetCommand } from './properties-get';
import { propertiesImportValuesCommand } from './properties-import-values';
import { propertiesListCommand } from './properties-list';
import { propertiesUpsertCommand } from './properties-upsert';

export const propertiesCommand = defineGroup(
  'properties',
  'structured property definitions: upsert from YAML, get, list; their values on entities as CSV',
  [propertiesUpsertCommand, propertiesGetCommand, propertiesListCommand, propertiesExportValuesCommand, propertiesImportValuesCommand],
);

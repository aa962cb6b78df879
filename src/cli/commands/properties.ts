import { defineGroup } from '../define-command';
import { propertiesApplyCommand } from './properties-apply';
import { propertiesExportValuesCommand } from './properties-export-values';
import { propertiesGetCommand } from './properties-get';
import { propertiesImportValuesCommand } from './properties-import-values';
import { propertiesListCommand } from './properties-list';
import { propertiesUpsertCommand } from './properties-upsert';

export const propertiesCommand = defineGroup(
  'properties',
  'structured property definitions: upsert from YAML, get, list; their values on entities as CSV; apply values to every match of a search',
  [
    propertiesUpsertCommand,
    propertiesGetCommand,
    propertiesListCommand,
    propertiesExportValuesCommand,
    propertiesImportValuesCommand,
    propertiesApplyCommand,
  ],
);

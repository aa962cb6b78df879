import { defineGroup } from '../define-command';
import { propertiesApplyCommand } from './properties-apply';
import { propertiesGetCommand } from './properties-get';
import { propertiesListCommand } from './properties-list';
import { propertiesUpsertCommand } from './properties-upsert';

export const propertiesCommand = defineGroup(
  'properties',
  'structured property definitions: upsert from YAML, get, list; apply values to every match of a search',
  [propertiesUpsertCommand, propertiesGetCommand, propertiesListCommand, propertiesApplyCommand],
);

import { defineGroup } from '../define-command';
import { propertiesGetCommand } from './properties-get';
import { propertiesListCommand } from './properties-list';
import { propertiesUpsertCommand } from './properties-upsert';

export const propertiesCommand = defineGroup('properties', 'structured property definitions: upsert from YAML, get, list', [
  propertiesUpsertCommand,
  propertiesGetCommand,
  propertiesListCommand,
]);

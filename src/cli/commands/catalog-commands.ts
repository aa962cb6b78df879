import type { Command } from '../io';
import { deleteCommand } from './delete';
import { indexSizesCommand } from './index-sizes';
import { initCommand } from './init';
import { propertiesCommand } from './properties';
import { systemUpdateCommand } from './system-update';
import { tokensCommand } from './tokens';
import { truncateTimeseriesCommand } from './truncate-timeseries';

/** The commands that work on a catalog (embedded or through a server), in the order --help lists them. */
export const CATALOG_COMMANDS: readonly Command[] = [
  initCommand,
  propertiesCommand,
  deleteCommand,
  tokensCommand,
  indexSizesCommand,
  truncateTimeseriesCommand,
  systemUpdateCommand,
];

import type { Command } from '../io';
import { backupCommand } from './backup';
import { changesCommand } from './changes';
import { deleteCommand } from './delete';
import { exportCommand } from './export';
import { restoreCommand } from './restore';
import { indexSizesCommand } from './index-sizes';
import { ingestCommand } from './ingest';
import { initCommand } from './init';
import { propertiesCommand } from './properties';
import { serveCommand } from './serve';
import { systemUpdateCommand } from './system-update';
import { tokensCommand } from './tokens';
import { policiesCommand } from './policies';
import { serviceAccountsCommand } from './service-accounts';
import { truncateTimeseriesCommand } from './truncate-timeseries';

/** Every command of the tool, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [
  serveCommand,
  initCommand,
  propertiesCommand,
  ingestCommand,
  exportCommand,
  backupCommand,
  deleteCommand,
  restoreCommand,
  tokensCommand,
  policiesCommand,
  serviceAccountsCommand,
  indexSizesCommand,
  truncateTimeseriesCommand,
  systemUpdateCommand,
  changesCommand,
];

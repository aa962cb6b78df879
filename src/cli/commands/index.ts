import type { Command } from '../io';
import { serveCommand } from './serve';

/** Every command of the tool, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [serveCommand];

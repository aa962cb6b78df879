// The public face of the jobs domain: what transports, the test kit and the package root use.
export { JobRunner } from './runner';
export type { JobRunnerOptions, SettleReport } from './runner';

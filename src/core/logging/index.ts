export { errorKind, limitRepeats } from './repeated-lines';
export type { RepeatLimitedLog, RepeatLimitOptions } from './repeated-lines';

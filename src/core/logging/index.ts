export { errorKind, limitRepeats } from './repeated-lines';
export type { RepeatLimitOptions } from './repeated-lines';

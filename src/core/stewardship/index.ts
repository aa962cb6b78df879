// The public face of the stewardship domain: work on many entities' structured properties at once.
export { createStewardship } from './service';

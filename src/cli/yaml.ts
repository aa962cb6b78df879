import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

/** The yaml package, loaded (about 50 ms) on the first use: most commands read no YAML. */
let loaded: typeof Yaml | undefined;
const yaml = (): typeof Yaml => (loaded ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

export const parseYaml = (text: string): unknown => yaml().parse(text) as unknown;
export const stringifyYaml = (value: unknown, options?: Yaml.ToStringOptions): string => yaml().stringify(value, options);

// Checked by `tsc --noEmit` (on the sources) and by test/pack/pack-install.mjs (on the packed declarations),
// never run: a host adds its own aspect to the package's typed aspect map by declaration merging on
// 'metacatalog', and gets the same checks as for built-in aspects.
import type { Catalog } from 'metacatalog';
declare module 'metacatalog' {
  interface AspectMap {
    ownership: { owners: string[] };
  }
}
declare const catalog: Catalog;
export async function f(): Promise<void> {
  await catalog.entities.upsertAspect('urn:li:corpuser:ana', 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)', 'ownership', {
    owners: ['x'],
  });
  const dataset = 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)';
  // @ts-expect-error owners is a list of strings
  await catalog.entities.upsertAspect('urn:li:corpuser:ana', dataset, 'ownership', { owners: 1 });
}

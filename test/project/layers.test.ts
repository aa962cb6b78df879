import { readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Imports flow one way: transport (GraphQL, HTTP, CLI) → domain (src/core, src/catalog.ts) → adapter
 * contract (src/adapter) ← adapters. Transports reach the domain only through each domain's public
 * face (src/core/<domain>/index.ts); the shipped test kit only through the public API. See
 * docs/architecture.md.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

type Layer = 'errors' | 'contract' | 'adapter' | 'domain' | 'graphql' | 'http' | 'cli' | 'testing';

function layerOf(file: string): Layer | undefined {
  if (file === 'src/errors.ts') return 'errors';
  if (file.startsWith('src/adapter/')) return 'contract';
  if (file.startsWith('adapters/')) return 'adapter';
  if (file.startsWith('src/core/') || file === 'src/catalog.ts' || file === 'src/index.ts') return 'domain';
  for (const layer of ['graphql', 'http', 'cli', 'testing'] as const) if (file.startsWith(`src/${layer}/`)) return layer;
  return undefined;
}

/** The domain files a transport may import: each domain's index.ts and the shared entry points. */
function isDomainFace(file: string): boolean {
  return /^src\/core\/[a-z-]+\/index\.ts$/.test(file) || ['src/core/urn.ts', 'src/catalog.ts', 'src/index.ts'].includes(file);
}

/** Why `from` may not import `to`, or undefined when it may. */
export function crossing(from: string, to: string): string | undefined {
  const a = layerOf(from);
  const b = layerOf(to);
  if (!a || !b) return undefined;
  if (a === b) {
    if (a === 'adapter' && from.split('/')[1] !== to.split('/')[1]) return 'an adapter imports another adapter';
    return undefined;
  }
  if (b === 'errors') return undefined;
  if (b === 'contract') return a === 'errors' ? 'src/errors.ts imports nothing of the project' : undefined;
  switch (a) {
    case 'errors':
      return 'src/errors.ts imports nothing of the project';
    case 'contract':
    case 'adapter':
      return `${a === 'contract' ? 'the adapter contract' : 'an adapter'} imports only src/adapter and src/errors.ts`;
    case 'domain':
      return 'the domain never imports a transport, the test kit or an adapter';
    case 'testing':
      return ['src/index.ts', 'src/catalog.ts'].includes(to) ? undefined : 'the test kit uses the public API only';
    case 'graphql':
    case 'http':
    case 'cli':
      if (b === 'domain') return isDomainFace(to) ? undefined : `a transport reaches the domain through src/core/<domain>/index.ts only`;
      if (b === 'adapter') return a === 'cli' ? undefined : 'only the CLI (the application entry) opens adapters';
      if (b === 'testing') return 'a transport imports the test kit';
      if (a === 'graphql') return 'GraphQL imports no other transport';
      if (a === 'http') return b === 'graphql' ? undefined : 'HTTP imports no transport but GraphQL';
      return undefined; // the CLI may use the HTTP and GraphQL layers
  }
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;

function resolveImport(from: string, spec: string, exists: (file: string) => boolean): string {
  const base = normalize(join(dirname(from), spec));
  for (const candidate of [base, `${base}.ts`, `${base}/index.ts`, base.replace(/\.js$/, '.ts')]) if (exists(candidate)) return candidate;
  return base;
}

/** Every import that crosses a layer the wrong way, as `from → to: reason`. */
export function layerViolations(sources: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of sources) {
    for (const match of text.matchAll(IMPORT)) {
      const target = resolveImport(file, match[2]!, (f) => sources.has(f));
      const why = crossing(file, target);
      if (why) out.push(`${file} → ${target}: ${why}`);
    }
  }
  return out;
}

const EXAMPLE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\1/g;

/** Imports of the examples that reach past the public API: a file outside examples/ (src/, adapters/...). */
export function exampleViolations(sources: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of sources) {
    for (const match of text.matchAll(EXAMPLE_IMPORT)) {
      const spec = match[2]!;
      if (!spec.startsWith('.')) continue; // packages: metacatalog and its subpaths, node:, vitest...
      const target = normalize(join(dirname(file), spec));
      if (!target.startsWith('examples/')) out.push(`${file} → ${target}: an example uses the public API only (import 'metacatalog')`);
    }
  }
  return out;
}

function exampleSources(): Map<string, string> {
  const files = execSync("git ls-files -co --exclude-standard 'examples/*.ts' 'examples/*.mjs'", { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  return new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));
}

/**
 * The order of the domains inside src/core, lowest first: a domain imports only domains below it (the
 * higher ones hand their aspect owners down at construction). `context.ts`, `urn.ts` and the input schemas
 * (`validation/schemas/`) sit beside the order; no circle of imports may run through them (or anywhere in
 * src/core).
 */
export const DOMAIN_ORDER = [
  // Leaves that import no other domain: the rate-limited error log and the metrics and spans.
  'logging',
  'telemetry',
  'validation',
  'access',
  'jobs',
  'entities',
  'timeseries',
  'properties',
  'search',
  'stewardship',
  'tokens',
  'changes',
  'transfer',
];

function domainOf(file: string): string | undefined {
  // The input schemas (one ajv catalogue, validation/schemas/) sit beside the order with context.ts and urn.ts.
  if (file.startsWith('src/core/validation/schemas/')) return undefined;
  return /^src\/core\/([a-z-]+)\//.exec(file)?.[1];
}

/** Every import of a domain inside src/core that goes up the order (or names a domain outside it). */
export function domainOrderViolations(sources: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of sources) {
    const from = domainOf(file);
    if (!from) continue;
    if (!DOMAIN_ORDER.includes(from)) {
      out.push(`${file}: the domain "${from}" has no place in the order of the domains`);
      continue;
    }
    for (const match of text.matchAll(IMPORT)) {
      const target = resolveImport(file, match[2]!, (f) => sources.has(f));
      const to = domainOf(target);
      if (!to || to === from) continue;
      if (!DOMAIN_ORDER.includes(to) || DOMAIN_ORDER.indexOf(to) > DOMAIN_ORDER.indexOf(from))
        out.push(`${file} → ${target}: ${from} imports ${to}, which is above it in the order of the domains`);
    }
  }
  return out;
}

/** Circles of imports among the given files (src/ and adapters/; type-only imports included), each sorted. */
export function importCircles(sources: ReadonlyMap<string, string>): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const targets = [...text.matchAll(IMPORT)].map((m) => resolveImport(file, m[2]!, (f) => sources.has(f)));
    edges.set(
      file,
      targets.filter((t) => sources.has(t)),
    );
  }
  // Tarjan's strongly connected components.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) circles.push(component.sort());
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return circles;
}

/** The only files that may import the unit of work (`src/core/entities/writer.ts`): every write goes through the pipeline. */
const WRITER = 'src/core/entities/writer.ts';
const WRITER_IMPORTERS = ['src/core/entities/write-pipeline.ts'];

/** Every import of the writer outside the write pipeline (type-only imports included). */
export function writerViolations(sources: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of sources) {
    if (file === WRITER || WRITER_IMPORTERS.includes(file)) continue;
    for (const match of text.matchAll(IMPORT)) {
      if (resolveImport(file, match[2]!, (f) => sources.has(f)) === WRITER)
        out.push(`${file} → ${WRITER}: only the write pipeline reaches the writer (write through it, or bookkeep through it)`);
    }
  }
  return out;
}

function repositorySources(): Map<string, string> {
  const files = execSync("git ls-files -co --exclude-standard 'src/*.ts' 'adapters/*.ts'", { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.endsWith('.ts'));
  return new Map(files.map((f) => [relative(root, join(root, f)), readFileSync(join(root, f), 'utf8')]));
}

describe('layers', () => {
  it('no import in src/ or adapters/ crosses a layer the wrong way', () => {
    const sources = repositorySources();
    expect(sources.size).toBeGreaterThan(100);
    expect(layerViolations(sources)).toEqual([]);
  });

  it('the examples import the public API only', () => {
    const sources = exampleSources();
    expect([...sources.keys()]).toEqual(expect.arrayContaining(['examples/adapter-from-parts/json-lines-store.ts']));
    expect(exampleViolations(sources)).toEqual([]);
  });

  it('the examples check finds a planted import of src/ (it can fail)', () => {
    const planted = new Map([
      [
        'examples/adapter-from-parts/index.ts',
        "import { composeAdapter } from '../../src/adapter/compose-adapter';\nimport { x } from './json-lines-store';",
      ],
      ['examples/embed.mjs', "import { createCatalog } from 'metacatalog';\nconst m = await import('../adapters/memory/index');"],
    ]);
    expect(exampleViolations(planted).map((v) => v.split(':')[0])).toEqual([
      'examples/adapter-from-parts/index.ts → src/adapter/compose-adapter',
      'examples/embed.mjs → adapters/memory/index',
    ]);
  });

  it('the check finds planted wrong-way imports (it can fail)', () => {
    const planted = new Map([
      ['src/errors.ts', ''],
      ['src/adapter/types.ts', "import { CatalogError } from '../errors';"],
      ['src/core/tokens/index.ts', ''],
      ['src/core/tokens/jwt.ts', "import type { X } from '../../graphql/schema';"],
      ['src/graphql/schema.ts', "import { keyIdOf } from '../core/tokens/jwt';\nimport { ok } from '../core/tokens';"],
      ['src/http/handler.ts', "const m = await import('../../adapters/sqlite/index');"],
      ['adapters/sqlite/index.ts', "import { TokenService } from '../../src/core/tokens/index';\nimport { x } from '../memory/index';"],
      ['adapters/memory/index.ts', "import type { StorageAdapter } from '../../src/adapter/types';"],
      ['src/testing/tokens.ts', "import { SigningKeys } from '../core/tokens/jwt';\nimport { createCatalog } from '../index';"],
      ['src/index.ts', ''],
    ]);
    expect(layerViolations(planted).map((v) => v.split(':')[0])).toEqual([
      'src/core/tokens/jwt.ts → src/graphql/schema.ts',
      'src/graphql/schema.ts → src/core/tokens/jwt.ts',
      'src/http/handler.ts → adapters/sqlite/index.ts',
      'adapters/sqlite/index.ts → src/core/tokens/index.ts',
      'adapters/sqlite/index.ts → adapters/memory/index.ts',
      'src/testing/tokens.ts → src/core/tokens/jwt.ts',
    ]);
  });

  it('the domains inside src/core import only down their order, and no circle of imports runs through src/ or adapters/', () => {
    const sources = repositorySources();
    expect(domainOrderViolations(sources)).toEqual([]);
    expect(importCircles(sources)).toEqual([]);
  });

  it('only the write pipeline imports the writer (no second way to write)', () => {
    const sources = repositorySources();
    expect(sources.has(WRITER)).toBe(true);
    expect(writerViolations(sources)).toEqual([]);
  });

  it('the writer check finds planted imports of the writer (it can fail)', () => {
    const planted = new Map([
      [WRITER, ''],
      ['src/core/entities/write-pipeline.ts', "import { EntityWriter } from './writer';"],
      ['src/core/tokens/service.ts', "import type { EntityWriter } from '../entities/writer';"],
      ['src/catalog.ts', "import { EntityWriter } from './core/entities/writer';"],
      ['src/core/properties/cleanup.ts', "import type { AspectChange } from '../entities/write-plan';"],
      ['src/core/entities/write-plan.ts', ''],
    ]);
    expect(writerViolations(planted).map((v) => v.split(' →')[0])).toEqual(['src/core/tokens/service.ts', 'src/catalog.ts']);
  });

  it('the order check finds a planted import up the order, and the circle check a planted circle (they can fail)', () => {
    const planted = new Map([
      ['src/core/entities/writer.ts', "import { x } from '../properties/types';\nimport { y } from '../access/actor';"],
      ['src/core/properties/types.ts', "import type { Z } from '../entities/writer';"],
      ['src/core/access/actor.ts', ''],
      ['src/core/context.ts', "import type { W } from './entities/writer';"],
      ['src/core/mystery/index.ts', ''],
      ['src/http/metrics-registry.ts', "import { registerGauges } from './metrics-gauges';"],
      ['src/http/metrics-gauges.ts', "import type { Prom } from './metrics-registry';"],
      ['adapters/sqlite/index.ts', "import { x } from './search';"],
      ['adapters/sqlite/search.ts', "import { y } from './search-sql';"],
      ['adapters/sqlite/search-sql.ts', "import type { Z } from './index';"],
    ]);
    expect(domainOrderViolations(planted).map((v) => v.split(':')[0])).toEqual([
      'src/core/entities/writer.ts → src/core/properties/types.ts',
      'src/core/mystery/index.ts',
    ]);
    expect(importCircles(planted).sort()).toEqual([
      ['adapters/sqlite/index.ts', 'adapters/sqlite/search-sql.ts', 'adapters/sqlite/search.ts'],
      ['src/core/entities/writer.ts', 'src/core/properties/types.ts'],
      ['src/http/metrics-gauges.ts', 'src/http/metrics-registry.ts'],
    ]);
  });
});

// Embedding metacatalog in a Node application, on a SQLite file that survives restarts.
//   npm start            (builds, then runs this file)
//   node examples/embed-sqlite.mjs [path/to/catalog.db]
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createCatalog, CatalogError } from 'metacatalog';
import { createSqliteAdapter } from 'metacatalog/adapters/sqlite';

const filename = process.argv[2] ?? './data/example.db';
mkdirSync(dirname(filename), { recursive: true });

const ADMIN = 'urn:li:corpuser:admin';
const catalog = createCatalog({
  adapter: createSqliteAdapter({ filename }),
  superUsers: [ADMIN],
  // Anyone may read; only these two may write entities.
  policies: [{ name: 'editors', actors: ['urn:li:corpuser:ana'], privileges: ['EDIT_ENTITY'] }],
});

const datasets = [
  ['hive', 'sales.orders', 'Every order placed in the web shop, one row per order line.'],
  ['hive', 'sales.customers', 'Customers with their billing country and segment.'],
  ['snowflake', 'finance.invoices', 'Invoices issued, with amounts in EUR.'],
];

try {
  // One atomic bulk write: validated whole first, audit-stamped with the actor.
  await catalog.entities.upsertMany(
    'urn:li:corpuser:ana',
    datasets.map(([platform, name, description]) => ({
      urn: `urn:li:dataset:(urn:li:dataPlatform:${platform},${name},PROD)`,
      aspects: { datasetProperties: { name, description }, status: { removed: false } },
    })),
  );

  // A refusal names what is missing.
  try {
    await catalog.entities.upsertAspect('urn:li:corpuser:bob', 'urn:li:dataset:(urn:li:dataPlatform:hive,x,PROD)', 'status', {
      removed: true,
    });
  } catch (error) {
    if (!(error instanceof CatalogError)) throw error;
    console.log(`bob was refused: ${error.code} — ${error.message}`);
  }

  // Bad input is INVALID_INPUT with every violation and where it is; nothing is written.
  try {
    await catalog.entities.upsertAspect(ADMIN, 'urn:li:dataset:(urn:li:dataPlatform:hive,y,PROD)', 'datasetProperties', {
      name: 42,
      colour: 'red',
    });
  } catch (error) {
    if (!(error instanceof CatalogError)) throw error;
    console.log(`invalid input: ${error.details.map((d) => `${d.path} ${d.message}`).join('; ')}`);
  }

  console.log(`\nDatasets in ${filename}:`);
  for (const entity of await catalog.entities.list(ADMIN, { entityType: 'dataset' })) {
    const props = entity.aspects.datasetProperties;
    console.log(`- ${entity.urn}`);
    console.log(`    ${props?.value.description ?? ''}`);
    console.log(
      `    last modified by ${props?.lastModified.actor} at ${new Date(props?.lastModified.time ?? 0).toISOString()} (version ${props?.version})`,
    );
  }
} finally {
  await catalog.close();
}

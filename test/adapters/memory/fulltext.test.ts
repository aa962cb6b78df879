import lunr from 'lunr';
import { describe, it, expect } from 'vitest';
import { createFullTextIndex, type FullTextFieldConfig, type FullTextIndex } from '../../../adapters/memory/fulltext';
import { seededRandom } from '../../../src/testing/random';

interface Doc {
  id: string;
  name?: string;
  description?: string;
  urnKey?: string;
}

const urn = (platform: string, name: string): string => `urn:li:dataset:(urn:li:dataPlatform:${platform},${name},PROD)`;

const CORPUS: readonly Doc[] = [
  {
    id: 'ds-01',
    name: 'customer orders',
    description: 'All orders placed by a customer, one row per order line.',
    urnKey: urn('hive', 'sales.customer_orders'),
  },
  {
    id: 'ds-02',
    name: 'customers',
    description: 'The customer master table with addresses and segments.',
    urnKey: urn('hive', 'crm.customers'),
  },
  {
    id: 'ds-03',
    name: 'order items',
    description: 'Items of each order; joins to the orders table.',
    urnKey: urn('hive', 'sales.order_items'),
  },
  {
    id: 'ds-04',
    name: 'daily revenue',
    description: 'Revenue aggregated per day and per region — refreshed nightly.',
    urnKey: urn('snowflake', 'finance.daily_revenue'),
  },
  {
    id: 'ds-05',
    name: 'monthly revenue',
    description: 'Revenue per month, derived from the daily revenue table.',
    urnKey: urn('snowflake', 'finance.monthly_revenue'),
  },
  {
    id: 'ds-06',
    name: 'customer segments',
    description: 'Marketing segments computed from customer behaviour.',
    urnKey: urn('bigquery', 'marketing.customer_segments'),
  },
  {
    id: 'ds-07',
    name: 'custody accounts',
    description: 'Accounts held in custody for institutional clients.',
    urnKey: urn('postgres', 'bank.custody_accounts'),
  },
  {
    id: 'ds-08',
    name: 'web sessions',
    description: 'Click-stream sessions from the web tracker.',
    urnKey: urn('kafka', 'events.web_sessions'),
  },
  {
    id: 'ds-09',
    name: 'page views',
    description: 'Page views, one event per view, partitioned by day.',
    urnKey: urn('kafka', 'events.page_views'),
  },
  {
    id: 'ds-10',
    name: 'inventory levels',
    description: 'Stock levels per warehouse and product, updated hourly.',
    urnKey: urn('postgres', 'ops.inventory_levels'),
  },
  { id: 'ds-11', name: 'products', description: 'Product catalogue: names, prices, categories.', urnKey: urn('postgres', 'ops.products') },
  {
    id: 'ds-12',
    name: 'product categories',
    description: 'A small lookup table of product categories.',
    urnKey: urn('postgres', 'ops.product_categories'),
  },
  {
    id: 'ds-13',
    name: 'suppliers',
    description: 'Suppliers of products, with contracts and contacts.',
    urnKey: urn('mysql', 'procurement.suppliers'),
  },
  {
    id: 'ds-14',
    name: 'purchase orders',
    description: 'Orders sent to suppliers; not customer orders.',
    urnKey: urn('mysql', 'procurement.purchase_orders'),
  },
  {
    id: 'ds-15',
    name: 'shipments',
    description: 'Shipments of customer orders from warehouses.',
    urnKey: urn('hive', 'logistics.shipments'),
  },
  { id: 'ds-16', name: 'returns', description: 'Returned order lines and refund amounts.', urnKey: urn('hive', 'logistics.returns') },
  {
    id: 'ds-17',
    name: 'employees',
    description: 'Employee directory; personal data, restricted table.',
    urnKey: urn('postgres', 'hr.employees'),
  },
  { id: 'ds-18', name: 'payroll', description: 'Monthly payroll per employee.', urnKey: urn('postgres', 'hr.payroll') },
  {
    id: 'ds-19',
    name: 'tables inventory',
    description: 'Inventory of all tables in the warehouse, with owners.',
    urnKey: urn('hive', 'meta.tables_inventory'),
  },
  { id: 'ds-20', name: 'table usage', description: 'Query counts per table and per user.', urnKey: urn('hive', 'meta.table_usage') },
  {
    id: 'ds-21',
    name: 'customer support tickets',
    description: 'Tickets opened by customers with the support team.',
    urnKey: urn('postgres', 'support.tickets'),
  },
  { id: 'ds-22', name: 'ticket comments', description: 'Comments on support tickets.', urnKey: urn('postgres', 'support.ticket_comments') },
  {
    id: 'ds-23',
    name: 'ad campaigns',
    description: 'Advertising campaigns, budgets and spend.',
    urnKey: urn('bigquery', 'marketing.campaigns'),
  },
  {
    id: 'ds-24',
    name: 'campaign clicks',
    description: 'Clicks attributed to campaigns, per customer and day.',
    urnKey: urn('bigquery', 'marketing.campaign_clicks'),
  },
  {
    id: 'ds-25',
    name: 'exchange rates',
    description: 'Daily exchange rates for revenue conversion.',
    urnKey: urn('snowflake', 'finance.fx_rates'),
  },
  {
    id: 'ds-26',
    name: 'general ledger',
    description: 'Ledger entries ( debits / credits ) per account.',
    urnKey: urn('snowflake', 'finance.ledger'),
  },
  {
    id: 'ds-27',
    name: 'churn model features',
    description: 'Feature table for the customer churn model.',
    urnKey: urn('s3', 'ml.churn_features'),
  },
  {
    id: 'ds-28',
    name: 'churn predictions',
    description: 'Predicted churn probability per customer, per week.',
    urnKey: urn('s3', 'ml.churn_predictions'),
  },
  { id: 'ds-29', name: 'empty description' },
  {
    id: 'ds-30',
    name: 'custom events',
    description: 'Custom tracking events defined by product teams.',
    urnKey: urn('kafka', 'events.custom'),
  },
];

const FIELDS: readonly FullTextFieldConfig[] = [{ name: 'name' }, { name: 'description' }, { name: 'urnKey' }];

function fieldsOf(doc: Doc): Record<string, string | undefined> {
  return { name: doc.name, description: doc.description, urnKey: doc.urnKey };
}

function buildIndex(docs: readonly Doc[], fields: readonly FullTextFieldConfig[] = FIELDS): FullTextIndex {
  const index = createFullTextIndex(fields);
  for (const doc of docs) index.upsert(doc.id, fieldsOf(doc));
  return index;
}

function buildLunr(docs: readonly Doc[], fields: readonly FullTextFieldConfig[] = FIELDS): lunr.Index {
  return lunr(function () {
    this.ref('id');
    for (const field of fields) this.field(field.name, field.boost === undefined ? undefined : { boost: field.boost });
    for (const doc of docs) this.add(doc);
  });
}

function lunrScores(index: lunr.Index, query: string): Map<string, number> {
  return new Map(index.search(query).map((result) => [result.ref, result.score]));
}

/** Ids by descending score; equal scores (up to float noise) are ordered by id, since tie order is unspecified. */
function ranking(scores: ReadonlyMap<string, number>): string[] {
  const rounded = (id: string): number => Math.round((scores.get(id) ?? 0) * 1e9);
  return [...scores.keys()].sort((a, b) => rounded(b) - rounded(a) || a.localeCompare(b));
}

function expectSameScores(actual: Map<string, number> | undefined, expected: ReadonlyMap<string, number>): void {
  expect(actual).toBeDefined();
  const scores = actual ?? new Map<string, number>();
  expect(ranking(scores)).toEqual(ranking(expected));
  for (const [id, score] of expected) expect(scores.get(id)).toBeCloseTo(score, 9);
}

const COMPARED_QUERIES = [
  'customer',
  'revenue',
  'orders revenue',
  'customer churn',
  'tables',
  'table',
  'cust*',
  'prod*',
  'urn*',
  'daily-revenue',
  'the customer',
  'customer customers',
  'ledger ( debits',
];

describe('createFullTextIndex compared with lunr()', () => {
  const index = buildIndex(CORPUS);
  const reference = buildLunr(CORPUS);

  it.each(COMPARED_QUERIES)('returns the ids, ranking and scores of lunr for %j', (query) => {
    const expected = lunrScores(reference, query);
    expect(expected.size).toBeGreaterThan(0);
    expectSameScores(index.search(query), expected);
  });

  it('stems query terms like lunr: "tables" and "table" match the same documents with the same scores', () => {
    const plural = index.search('tables');
    const singular = index.search('table');
    expect(plural).toEqual(singular);
    expect([...(plural?.keys() ?? [])].sort()).toEqual(['ds-02', 'ds-03', 'ds-05', 'ds-12', 'ds-17', 'ds-19', 'ds-20', 'ds-27']);
  });

  it('expands a trailing wildcard without stemming: cust* covers customer, custody and custom', () => {
    const ids = [...(index.search('cust*')?.keys() ?? [])];
    expect(ids).toEqual(expect.arrayContaining(['ds-01', 'ds-07', 'ds-30']));
    expect(ids).not.toContain('ds-08');
  });

  it('does not stem prefix terms, like lunr: "tables*" finds nothing because "tables" was indexed as "tabl"', () => {
    expect(lunrScores(reference, 'tables*').size).toBe(0);
    expect(index.search('tables*')).toEqual(new Map());
    expectSameScores(index.search('tabl*'), lunrScores(reference, 'tabl*'));
  });

  it('applies field boosts like lunr', () => {
    const boosted: FullTextFieldConfig[] = [{ name: 'name', boost: 10 }, { name: 'description' }, { name: 'urnKey', boost: 2 }];
    const boostedIndex = buildIndex(CORPUS, boosted);
    const boostedReference = buildLunr(CORPUS, boosted);
    for (const query of ['customer', 'orders revenue', 'cust*', 'churn']) {
      expectSameScores(boostedIndex.search(query), lunrScores(boostedReference, query));
    }
    // Guards against a vacuous comparison: the boosts must actually change the scores.
    expect(boostedIndex.search('customer')).not.toEqual(index.search('customer'));
  });
});

describe('createFullTextIndex incremental updates', () => {
  const QUERIES = ['customer', 'orders revenue', 'table', 'cust*', 'churn model', 'zebra', 'support tickets'];

  function expectEqualToFreshBuild(index: FullTextIndex, finalDocs: readonly Doc[]): void {
    const fresh = buildIndex(finalDocs);
    const reference = buildLunr(finalDocs);
    expect(index.size).toBe(finalDocs.length);
    for (const query of QUERIES) {
      const expected = fresh.search(query) ?? new Map<string, number>();
      expectSameScores(index.search(query), expected);
      expectSameScores(index.search(query), lunrScores(reference, query));
    }
  }

  it('after upserts, replacements and removes scores equal a fresh build of the final documents', () => {
    const index = buildIndex(CORPUS);
    const finalDocs = new Map(CORPUS.map((doc) => [doc.id, doc]));
    const apply = (doc: Doc): void => {
      index.upsert(doc.id, fieldsOf(doc));
      finalDocs.set(doc.id, doc);
    };
    const drop = (id: string): void => {
      index.remove(id);
      finalDocs.delete(id);
    };

    // Replace: changes terms, field lengths and document frequencies.
    apply({ id: 'ds-01', name: 'customer orders v2', description: 'Zebra zebra orders, rewritten with a longer description than before.' });
    apply({ id: 'ds-04', name: 'daily revenue' });
    // Remove, including the only holders of some terms (custody, payroll).
    drop('ds-07');
    drop('ds-18');
    drop('ds-12');
    // Add then remove: must leave no trace in postings, counts or average lengths.
    apply({ id: 'tmp-1', name: 'temporary customer table', description: 'churn churn churn model' });
    apply({ id: 'tmp-2', name: 'another', description: 'support tickets support' });
    drop('tmp-1');
    // Re-add a removed id with new content, and add a new document.
    apply({ id: 'ds-07', name: 'custodian', description: 'Custodian banks and their customers.' });
    apply({ id: 'new-1', name: 'zebra crossings', description: 'A table of zebra crossings per city.', urnKey: urn('hive', 'geo.zebra') });

    expectEqualToFreshBuild(index, [...finalDocs.values()]);
  });

  it('after a long seeded-random sequence of operations scores equal a fresh build', () => {
    const random = seededRandom(42);
    const words = [
      'customer',
      'customers',
      'order',
      'orders',
      'table',
      'tables',
      'revenue',
      'churn',
      'model',
      'support',
      'tickets',
      'the',
      'and',
      'zebra',
      'custody',
      'custom',
      'daily',
      'of',
      '—',
      'model-v2',
    ];
    const sentence = (length: number): string => Array.from({ length }, () => words[Math.floor(random() * words.length)]).join(' ');
    const index = createFullTextIndex(FIELDS);
    const finalDocs = new Map<string, Doc>();
    for (let step = 0; step < 500; step += 1) {
      const id = `doc-${Math.floor(random() * 40)}`;
      if (random() < 0.3) {
        index.remove(id);
        finalDocs.delete(id);
      } else {
        const doc: Doc = {
          id,
          name: sentence(1 + Math.floor(random() * 3)),
          description: random() < 0.2 ? undefined : sentence(Math.floor(random() * 12)),
        };
        index.upsert(id, fieldsOf(doc));
        finalDocs.set(id, doc);
      }
    }
    expect(finalDocs.size).toBeGreaterThan(10);
    expectEqualToFreshBuild(index, [...finalDocs.values()]);
  });

  it('a document removed and upserted again scores as before', () => {
    const index = buildIndex(CORPUS);
    const before = index.search('customer orders');
    const doc = CORPUS[0];
    if (doc === undefined) throw new Error('empty corpus');
    index.remove(doc.id);
    expect(index.search('customer orders')?.has(doc.id)).toBe(false);
    index.upsert(doc.id, fieldsOf(doc));
    expectSameScores(index.search('customer orders'), before ?? new Map());
  });
});

describe('createFullTextIndex query edge cases', () => {
  const index = buildIndex(CORPUS);

  it('returns undefined ("match all") for *, an empty or blank query', () => {
    expect(index.search('*')).toBeUndefined();
    expect(index.search('')).toBeUndefined();
    expect(index.search('   ')).toBeUndefined();
    expect(index.search(' * ** ')).toBeUndefined();
  });

  it('returns an empty map when no term survives the pipeline', () => {
    const stopWordsOnly = index.search('the and of');
    expect(stopWordsOnly).toBeInstanceOf(Map);
    expect(stopWordsOnly?.size).toBe(0);
    expect(index.search('-')).toEqual(new Map());
    expect(index.search('zzzunknown')).toEqual(new Map());
  });

  it('ignores stop words, punctuation and a bare * next to real terms', () => {
    const plain = index.search('customer');
    expect(index.search('the customer')).toEqual(plain);
    expect(index.search('customer ,')).toEqual(plain);
    expect(index.search('customer *')).toEqual(plain);
  });

  it('is case-insensitive and splits on hyphens like lunr', () => {
    expect(index.search('CUSTOMER')).toEqual(index.search('customer'));
    expect(index.search('daily-revenue')).toEqual(index.search('daily revenue'));
  });

  it('removing an unknown id is a no-op', () => {
    const before = index.search('orders');
    index.remove('no-such-id');
    expect(index.size).toBe(CORPUS.length);
    expect(index.search('orders')).toEqual(before);
  });

  it('counts documents in size, including replaced ones once and documents with no text', () => {
    const small = createFullTextIndex(FIELDS);
    expect(small.size).toBe(0);
    expect(small.search('anything')).toEqual(new Map());
    small.upsert('a', { name: 'alpha' });
    small.upsert('b', { name: 'beta', description: '' });
    small.upsert('a', { name: 'alpha again' });
    small.upsert('empty', { name: undefined, unrelated: 'alpha' });
    expect(small.size).toBe(3);
    expect([...(small.search('alpha')?.keys() ?? [])]).toEqual(['a']);
    small.remove('a');
    small.remove('a');
    expect(small.size).toBe(2);
    expect(small.search('alpha')).toEqual(new Map());
  });

  it('rejects duplicate field names and non-positive boosts', () => {
    expect(() => createFullTextIndex([{ name: 'name' }, { name: 'name' }])).toThrow(RangeError);
    expect(() => createFullTextIndex([{ name: 'name', boost: 0 }])).toThrow(RangeError);
    expect(() => createFullTextIndex([{ name: 'name', boost: Number.NaN }])).toThrow(RangeError);
  });
});

describe('createFullTextIndex: postings written in bulk', () => {
  it('answers alike whether documents are searched after each write or only after all of them', () => {
    const random = seededRandom(21);
    const words = ['orders', 'customer', 'revenue', 'daily', 'ledger', 'churn', 'events', 'table'];
    const docs: Doc[] = Array.from({ length: 300 }, (_, i) => ({
      id: `d${i}`,
      name: `${words[i % words.length]} ${i}`,
      description: Array.from({ length: 6 }, () => words[Math.floor(random() * words.length)]).join(' '),
      urnKey: urn('hive', `db.t_${i}`),
    }));
    const bulk = buildIndex(docs);
    const stepwise = createFullTextIndex(FIELDS);
    for (const doc of docs) {
      stepwise.upsert(doc.id, fieldsOf(doc));
      stepwise.search('orders');
    }
    // Replacements and removals after the bulk: the queued postings are settled first.
    const changed = buildIndex(docs);
    for (const doc of docs.slice(0, 50)) changed.upsert(doc.id, { ...fieldsOf(doc), name: 'renamed table' });
    for (const doc of docs.slice(50, 80)) changed.remove(doc.id);
    const expected = buildLunr([...docs.slice(0, 50).map((doc) => ({ ...doc, name: 'renamed table' })), ...docs.slice(80)]);
    for (const query of ['orders', 'customer revenue', 'tabl*', 'hive', 'renamed', '17']) {
      expectSameScores(bulk.search(query), stepwise.search(query)!);
      expectSameScores(changed.search(query), lunrScores(expected, query));
    }
  });
});

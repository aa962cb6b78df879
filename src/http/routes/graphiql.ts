import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { RouteResult, RouteSpec } from '../router';

/**
 * A page for a person: `GET /` says what the service is and links the GraphQL IDE; `GET /graphiql` is
 * GraphiQL, served with its scripts from this package (copied into the build from the graphiql, react
 * and react-dom packages), so it works without a network. Public: the page holds no data; the queries it
 * sends carry the token the person pastes into its headers.
 */

/** The files the page loads, by the name it asks for, with where the build keeps them. */
const ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  'graphiql.min.css': { file: 'graphiql.min.css', type: 'text/css; charset=utf-8' },
  'graphiql.min.js': { file: 'graphiql.min.js', type: 'text/javascript; charset=utf-8' },
  'react.production.min.js': { file: 'react.production.min.js', type: 'text/javascript; charset=utf-8' },
  'react-dom.production.min.js': { file: 'react-dom.production.min.js', type: 'text/javascript; charset=utf-8' },
};

/** The build puts the assets in dist/graphiql/, beside the chunk that holds this code. */
const ASSET_DIRECTORIES = [new URL('./graphiql/', import.meta.url), new URL('../../../dist/graphiql/', import.meta.url)];

const cache = new Map<string, string>();

async function asset(name: string): Promise<string | undefined> {
  const known = ASSETS[name];
  if (!known) return undefined;
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  for (const directory of ASSET_DIRECTORIES) {
    try {
      const text = await readFile(fileURLToPath(new URL(known.file, directory)), 'utf8');
      cache.set(name, text); // four files, a few MB: bounded by the table above
      return text;
    } catch {
      // The next place (the build, or this checkout's dist when running from sources).
    }
  }
  return undefined;
}

const html = (body: string): RouteResult => ({ body, contentType: 'text/html; charset=utf-8' });

function landingPage(base: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>metacatalog</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}</style></head>
<body><h1>metacatalog</h1>
<p>A metadata catalog: entities and their aspects, structured properties, access tokens and timeseries.</p>
<ul>
<li><a href="${base}/graphiql">GraphiQL</a>: explore and run the GraphQL API (<code>POST ${base}/api/graphql</code>).</li>
<li><a href="${base}/openapi/v2/api-docs">The OpenAPI document</a> of the REST routes.</li>
<li><a href="${base}/health">Health</a>.</li>
</ul>
<p>Requests need <code>Authorization: Bearer &lt;access token&gt;</code>: in GraphiQL, put it in the Headers tab.</p>
</body></html>
`;
}

function graphiqlPage(base: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>metacatalog · GraphiQL</title>
<link rel="stylesheet" href="${base}/graphiql/graphiql.min.css">
<style>body{margin:0;height:100vh}#graphiql{height:100vh}</style></head>
<body><div id="graphiql">Loading GraphiQL…</div>
<script src="${base}/graphiql/react.production.min.js"></script>
<script src="${base}/graphiql/react-dom.production.min.js"></script>
<script src="${base}/graphiql/graphiql.min.js"></script>
<script>
  const fetcher = GraphiQL.createFetcher({ url: ${JSON.stringify(`${base}/api/graphql`)} });
  const defaultHeaders = JSON.stringify({ Authorization: 'Bearer <paste an access token>' }, null, 2);
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, { fetcher, defaultHeaders, defaultQuery: '# Put your access token in the Headers tab, then run:\\n{ searchAcrossEntities(input: { query: "*", count: 10 }) { total searchResults { entity { urn type } } } }\\n' }),
  );
</script></body></html>
`;
}

export const graphiqlRoutes: readonly RouteSpec[] = [
  { pattern: '/', methods: { GET: { body: 'none', public: true, handle: async (ctx) => html(landingPage(ctx.basePath)) } } },
  { pattern: '/graphiql', methods: { GET: { body: 'none', public: true, handle: async (ctx) => html(graphiqlPage(ctx.basePath)) } } },
  {
    pattern: '/graphiql/{asset}',
    methods: {
      GET: {
        body: 'none',
        public: true,
        handle: async (ctx) => {
          const name = ctx.params.asset ?? '';
          const text = await asset(name);
          if (text === undefined) return { status: 404, body: { error: { code: 'NOT_FOUND', message: `no GraphiQL file ${name}` } } };
          return { body: text, contentType: ASSETS[name]!.type, headers: { 'Cache-Control': 'public, max-age=86400' } };
        },
      },
    },
  },
];

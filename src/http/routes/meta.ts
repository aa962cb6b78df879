import openapiDocument from '../openapi.json';
import type { RouteSpec } from '../router';

/** The OpenAPI document of the REST family and a health check (both public), and whom the credentials act as. */
export const metaRoutes: readonly RouteSpec[] = [
  {
    pattern: '/openapi/v2/api-docs',
    methods: { GET: { body: 'none', public: true, handle: async () => ({ body: openapiDocument }) } },
  },
  {
    // Whom the request's credentials act as: the command line's remote mode asks rather than decoding a token.
    pattern: '/openapi/v2/me',
    methods: { GET: { body: 'none', handle: async (ctx) => ({ body: { urn: ctx.actorUrn } }) } },
  },
  {
    pattern: '/health',
    methods: {
      GET: {
        body: 'none',
        public: true,
        // Healthy once the storage adapter is open (a failed open answers 500 through the error hook).
        handle: async (ctx) => {
          await ctx.catalog.ready();
          const health = await ctx.catalog.health();
          // Failing writes (a full disk...) make the service unhealthy, so that a balancer stops sending writes.
          return health.status === 'ok' ? { body: health } : { status: 503, body: health };
        },
      },
    },
  },
];

import openapiDocument from '../openapi.json';
import type { RouteSpec } from '../router';

/** The routes that need no credentials: the OpenAPI document of the REST family, and a health check. */
export const metaRoutes: readonly RouteSpec[] = [
  {
    pattern: '/openapi/v2/api-docs',
    methods: { GET: { body: 'none', public: true, handle: async () => ({ body: openapiDocument }) } },
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
          return { body: { status: 'ok' } };
        },
      },
    },
  },
];

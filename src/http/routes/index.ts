import type { Catalog } from '../../catalog';
import type { RouteSpec } from '../router';
import type { HttpOptions } from '../types';
import { applyToMatchesRoutes } from './apply-to-matches';
import { changeRoutes } from './changes';
import { entityRoutes } from './entities';
import { exportRoutes } from './export';
import { graphqlRoutes } from './graphql';
import { graphiqlRoutes } from './graphiql';
import { metaRoutes } from './meta';
import { openapiV3Routes } from './openapi-v3';
import { operationRoutes } from './operations';
import { propertyValueRoutes } from './property-values';
import { restliRoutes } from './restli';
import { timeseriesRoutes } from './timeseries';
import { tokenRoutes } from './tokens';

/** Every route the handler serves (each also under `/gms`). */
export function allRoutes(catalog: Catalog, options: HttpOptions): RouteSpec[] {
  return [
    ...(options.graphql === false ? [] : graphqlRoutes(catalog, options.graphqlLimits)),
    ...entityRoutes,
    ...openapiV3Routes,
    ...propertyValueRoutes,
    ...timeseriesRoutes,
    ...operationRoutes,
    ...restliRoutes,
    ...metaRoutes,
    ...changeRoutes,
    ...tokenRoutes,
    ...applyToMatchesRoutes,
    ...exportRoutes,
    ...graphiqlRoutes,
  ];
}

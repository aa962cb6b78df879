import type { RouteSpec } from '../router';
import type { HttpOptions } from '../types';
import { entityRoutes } from './entities';
import { metaRoutes } from './meta';
import { operationRoutes } from './operations';
import { timeseriesRoutes } from './timeseries';

/** Every route the handler serves (each also under `/gms`). */
export function allRoutes(_options: HttpOptions): RouteSpec[] {
  return [...entityRoutes, ...timeseriesRoutes, ...operationRoutes, ...metaRoutes];
}

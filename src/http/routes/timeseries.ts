import type { Catalog } from '../../catalog';
import { CatalogError } from '../../core/errors';
import type { RouteSpec } from '../router';

// Placeholder until the timeseries service (catalog.timeseries) lands on main.
function unsupported(): never {
  throw new CatalogError('UNSUPPORTED', 'timeseries aspects are not available in this build');
}

export async function latestTimeseriesValue(_catalog: Catalog, _actor: string, _urn: string, _aspect: string): Promise<unknown> {
  unsupported();
}

export async function appendTimeseriesAspect(_catalog: Catalog, _actor: string, _urn: string, _aspect: string, _body: unknown): Promise<unknown> {
  unsupported();
}

export const timeseriesRoutes: readonly RouteSpec[] = [];

import type { RouteSpec } from '../router';

// Placeholder until the timeseries service (catalog.timeseries) lands on main.
export const operationRoutes: readonly RouteSpec[] = [];

// The property-value index part of the SQLite adapter: which entities carry values of a property.
export { countEntitiesWithPropertyValues, findEntitiesWithPropertyValues } from './property-value-counts';
export { findEntitiesWithSeveralPropertyValues } from './search';

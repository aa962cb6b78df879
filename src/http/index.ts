/**
 * `metacatalog/http`: `createFetchHandler` and `createNodeListener` arrive with the HTTP issue. The
 * entry point exists from the start so that the exports map is stable; it loads nothing yet.
 */
export const HTTP_ENTRY_VERSION = 0;

/**
 * search-module.mjs, which scripts/build-yaml-module.mjs generates from
 * src/features/catalog/search-entry.ts (it is not committed). Its exports are typed where the
 * feature loads it (features/catalog/search.ts), so storage imports no feature.
 */
export {};

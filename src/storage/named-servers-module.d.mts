/**
 * named-servers-module.mjs, which scripts/build-yaml-module.mjs generates from
 * src/features/named-servers/lazy-entry.ts (it is not committed). Its exports are typed where
 * the feature loads it (features/named-servers/loader.ts), so storage imports no feature.
 */
export {};

/**
 * user-credentials-module.mjs, which scripts/build-yaml-module.mjs generates from
 * src/features/user-credentials/lazy-entry.ts (it is not committed). Its exports are typed
 * where the feature loads it (features/user-credentials/library-loader.ts), so storage
 * imports no feature.
 */
export {};

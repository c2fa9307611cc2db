/**
 * code-mode-module.mjs, which scripts/build-yaml-module.mjs generates from
 * src/features/code-mode/lazy-entry.ts and acorn (it is not committed). Its exports are typed
 * where the feature loads it (features/code-mode/library-loader.ts), so storage imports no feature.
 */
export {};

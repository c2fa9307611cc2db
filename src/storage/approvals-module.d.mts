/**
 * approvals-module.mjs, which scripts/build-yaml-module.mjs generates from
 * src/features/approvals/lazy-entry.ts (it is not committed). Its exports are typed where the
 * feature loads it (features/approvals/load.ts), so storage imports no feature.
 */
export {};

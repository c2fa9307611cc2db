/**
 * guardrails-module.mjs, which scripts/build-yaml-module.mjs generates from
 * src/features/guardrails/engine.ts (it is not committed). Its exports are typed where the
 * feature loads it (features/guardrails/engine-loader.ts), so storage imports no feature.
 */
export {};

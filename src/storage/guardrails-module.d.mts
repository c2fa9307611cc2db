/**
 * The types of guardrails-module.mjs, which scripts/build-yaml-module.mjs generates from
 * src/features/guardrails/engine.ts (it is not committed).
 */
export * from "../features/guardrails/engine.ts";

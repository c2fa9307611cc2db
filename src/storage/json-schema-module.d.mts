/**
 * The types of json-schema-module.mjs, which scripts/build-yaml-module.mjs generates (it is
 * not committed): @cfworker/json-schema's Validator, bundled as a module of its own so the
 * Worker loads it only to check a call's arguments against a held change (json-schema-library.ts).
 */
export { Validator } from "@cfworker/json-schema";

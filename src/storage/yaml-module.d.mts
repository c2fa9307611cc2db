/**
 * The types of yaml-module.mjs, which scripts/build-yaml-module.mjs generates (it is not
 * committed): the `yaml` package's `parse`, bundled as a module of its own so the Worker
 * loads it only when it reads a YAML document (document-store.ts).
 */
export { parse } from "yaml";

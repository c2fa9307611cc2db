/**
 * What code mode loads only when a client uses it, bundled (with acorn) into a module of
 * its own, src/storage/code-mode-module.mjs (scripts/build-yaml-module.mjs): the answers of
 * the two tools (code-tools.ts), with the sandbox (run-code.ts, sandbox-modules.ts,
 * program.ts) and the declarations (declarations.ts). The main module keeps only the glue
 * (code-mode.ts, inner-call.ts), so an isolate that never serves code mode never parses the rest.
 */
export { declarationsAnswer, runAnswer } from "./code-tools";

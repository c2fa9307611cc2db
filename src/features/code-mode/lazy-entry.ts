/**
 * What code mode loads only when a client uses it, bundled (with acorn) into a module of
 * its own, src/storage/code-mode-module.mjs (scripts/build-yaml-module.mjs): preparing a
 * program, the sandbox's modules, and the tools' TypeScript declarations. The main module
 * keeps only the glue (code-mode.ts, run-code.ts, inner-call.ts), so an isolate that never
 * serves code mode never parses the rest.
 */
export { prepareProgram } from "./program";
export { HARNESS_MODULE, sandboxModules } from "./sandbox-modules";
export { toolDeclarations, toolIdentifiers } from "./declarations";

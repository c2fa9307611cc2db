/**
 * The types of code-mode-module.mjs, which scripts/build-yaml-module.mjs generates (it is not
 * committed): code mode's program preparation with acorn, sandbox modules and declarations, bundled as a module of its own so
 * the Worker loads it only to run a program (code-mode-library.ts).
 */
export { declarationsAnswer, runAnswer } from "../features/code-mode/lazy-entry";

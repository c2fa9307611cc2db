/**
 * Code mode's program preparation, sandbox modules and declarations (lazy-entry.ts with
 * acorn), loaded from the module of its own that the Worker uploads beside the main module
 * (storage/code-mode-library.ts says why it is loaded there).
 */
import { loadCodeModeModule } from "../../storage/code-mode-library";

/** The module's exports: lazy-entry.ts bundled. */
export type CodeModeLibrary = Pick<typeof import("./lazy-entry"), "declarationsAnswer" | "runAnswer">;

/** The module, loaded on first use in this isolate. */
export async function loadCodeModeLibrary(): Promise<CodeModeLibrary> {
  return (await loadCodeModeModule()) as CodeModeLibrary;
}

/**
 * Code mode's names, shared by the main module's glue (code-mode.ts) and the lazily
 * loaded answers (code-tools.ts).
 */
import { SYS_PREFIX } from "../../core/names";

/** The tool that runs a program. */
export const RUN_CODE = `${SYS_PREFIX}run_code`;
/** The binding code mode's sandboxes come from (wrangler.toml `[[worker_loaders]]`). */
export const LOADER_BINDING = "LOADER";

/** Why a call that asked the client something (sampling, elicitation) failed inside a program. */
export function needsClientMessage(name: string, method: string): string {
  return `${name} asked the client (${method}), which a program cannot answer: call ${name} directly`;
}

/**
 * Code mode's names, shared by the main module's glue (code-mode.ts) and the lazily
 * loaded answers (code-tools.ts).
 */
import { SYS_PREFIX } from "../../core/names";

/** The tool that runs a program. */
export const RUN_CODE = `${SYS_PREFIX}run_code`;
/** The binding code mode's sandboxes come from (wrangler.toml `[[worker_loaders]]`). */
export const LOADER_BINDING = "LOADER";

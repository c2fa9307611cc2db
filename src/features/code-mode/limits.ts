/**
 * The bounds of a code-mode run, each a named constant with its unit (README.md lists
 * them). A program is untrusted text a model wrote: every resource it can spend is capped,
 * and reaching a cap ends the run with a tool error that names it.
 */

/** CPU time the platform gives the sandbox's isolate per run (the loader's `limits.cpuMs`; enforced when deployed). */
export const RUN_CPU_MS = 1_000;
/**
 * Steps a program may take: every loop iteration and every function call is one. It is
 * what stops `while (true) {}` wherever the platform's CPU limit is not enforced (`wrangler
 * dev` runs every isolate on one thread, so a loop that never yields would stall the gateway).
 */
export const RUN_STEP_LIMIT = 2_000_000;
/** Wall time of a run, from the sandbox's start to its answer, tool calls included. */
export const RUN_WALL_TIME_MS = 30_000;
/** Tool calls one run may make (each a subrequest of the gateway). */
export const MAX_TOOL_CALLS_PER_RUN = 50;
/** Tool calls of one run in flight at once (a Worker has at most 6 open connections per request). */
export const MAX_PARALLEL_TOOL_CALLS = 4;
/** UTF-8 bytes of `console.log` output kept per run; the rest is cut, and the answer says so. */
export const MAX_LOG_BYTES = 16 * 1024;
/**
 * UTF-8 bytes of the program's return value, as JSON, the gateway takes from the sandbox.
 * A value over the offload threshold is offloaded as any large result; one over this bound
 * is refused (it is held in memory whole: the size of an answer offload still holds).
 */
export const MAX_RESULT_BYTES = 8 * 1024 * 1024;
/**
 * UTF-8 bytes of one tool call's answer a program gets whole: up to this, offload leaves
 * the result to the program (only what it returns reaches the client); above it the
 * program gets offload's envelope, as a direct call would (it can return it to the client).
 */
export const MAX_INNER_RESULT_BYTES = 4 * 1024 * 1024;
/** Characters of program text a run takes. */
export const MAX_CODE_CHARS = 64 * 1024;
/** UTF-8 bytes of one tool call's arguments, as JSON. */
export const MAX_CALL_ARGUMENT_BYTES = 256 * 1024;

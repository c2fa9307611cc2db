/**
 * The modules of a code-mode sandbox, as text for the Worker Loader. `harness.js` is the
 * entry point the gateway calls (`run(host, places)`): it builds `tools.<upstream>.<tool>`
 * from the places the gateway sends, each a call back through `host` (the one RPC stub the
 * sandbox gets), and a `console` whose output is kept up to MAX_LOG_BYTES. `program.js` is
 * the prepared program (program.ts) as the body of an async function, on its own module so
 * that an error's line in it is the model's line plus one; `step.js` holds the step count,
 * out of the program's reach.
 *
 * Nothing here is trusted afterwards: the program runs in the same isolate as the harness
 * and can change its globals, so the gateway checks every value the sandbox answers
 * (run-code.ts).
 */
import { MAX_LOG_BYTES, RUN_STEP_LIMIT } from "./limits";
import { STEP_FUNCTION } from "./program";

/** The sandbox's entry module. */
export const HARNESS_MODULE = "harness.js";
const PROGRAM_MODULE = "program.js";

const STEP_SOURCE = `let steps = 0;
export function ${STEP_FUNCTION}() {
  if (++steps <= ${RUN_STEP_LIMIT}) return;
  throw new RangeError("the program took more than ${RUN_STEP_LIMIT} steps (loop iterations and calls): stopped");
}
`;

const HARNESS_SOURCE = `import { WorkerEntrypoint } from "cloudflare:workers";
import program from "./${PROGRAM_MODULE}";
const MAX_LOG_BYTES = ${MAX_LOG_BYTES};
const encoder = new TextEncoder();
function show(value) {
  if (typeof value === "string") return value;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}
function lineOf(error) {
  const stack = error && typeof error.stack === "string" ? error.stack : "";
  const found = /program\\.js:(\\d+):\\d+/.exec(stack);
  return found ? Number(found[1]) - 1 : undefined;
}
export default class CodeSandbox extends WorkerEntrypoint {
  async run(host, places) {
    const logs = [];
    let logBytes = 0;
    let logsCut = false;
    const write = (prefix) => (...values) => {
      if (logsCut) return;
      const line = prefix + values.map(show).join(" ");
      const bytes = encoder.encode(line).length + 1;
      if (logBytes + bytes > MAX_LOG_BYTES) { logsCut = true; return; }
      logBytes += bytes;
      logs.push(line);
    };
    const console = Object.freeze({
      log: write(""), info: write(""), debug: write(""), warn: write("[warn] "), error: write("[error] "),
    });
    const tools = {};
    for (const { upstream, tool } of places) {
      tools[upstream] ??= {};
      tools[upstream][tool] = async (args = {}) => {
        const answer = await host.call(upstream, tool, JSON.stringify(args));
        if (!answer.ok) throw new Error(answer.message);
        return answer.value === undefined ? undefined : JSON.parse(answer.value);
      };
    }
    for (const group of Object.values(tools)) Object.freeze(group);
    Object.freeze(tools);
    try {
      const value = await program(tools, console);
      const text = value === undefined ? undefined : JSON.stringify(value);
      return { ok: true, value: text, logs, logsCut };
    } catch (error) {
      const message = error instanceof Error ? error.name + ": " + error.message : "thrown: " + show(error);
      return { ok: false, message, line: lineOf(error), logs, logsCut };
    }
  }
}
`;

/**
 * The modules of a sandbox running `body` (a prepared program).
 *
 * @example
 * const modules = sandboxModules(prepared.body);
 * env.LOADER.load({ compatibilityDate, mainModule: HARNESS_MODULE, modules, globalOutbound: null });
 */
export function sandboxModules(body: string): Record<string, string> {
  // One line before the body: a line of program.js is the model's line plus one.
  const head = `import { ${STEP_FUNCTION} } from "./step.js"; export default async function program(tools, console) {`;
  const program = `${head}\n${body}\n}\n`;
  return { [HARNESS_MODULE]: HARNESS_SOURCE, [PROGRAM_MODULE]: program, "step.js": STEP_SOURCE };
}

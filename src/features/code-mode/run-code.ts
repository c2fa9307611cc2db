/**
 * Runs one code-mode program: prepares it (program.ts, with acorn), starts a
 * fresh isolate for it from the Worker Loader with no network (`globalOutbound: null`), no
 * bindings, and the platform's CPU limit, and hands it one RPC stub back: a `CodeHost`
 * made for this run, which holds the caller's context and runs each tool call the program
 * makes through the pipeline (inner-call.ts). The host counts and bounds those calls, and
 * closes when the run ends, so a call the program left running cannot reach the gateway later.
 *
 * Every way a program can end comes back as a value (`RunOutcome`): its return value and
 * logs, or a message with the line it failed on. The sandbox is untrusted, so what it
 * answers is checked here, not believed.
 */
import { RpcTarget } from "cloudflare:workers";
import { prepareProgram } from "./program";
import { HARNESS_MODULE, sandboxModules } from "./sandbox-modules";
import { isObject } from "../../core/jsonrpc";
import type { ToolPlace } from "./declarations";
import type { ToolOutcome } from "./tool-outcome";
import {
  MAX_CALL_ARGUMENT_BYTES,
  MAX_LOG_BYTES,
  MAX_PARALLEL_TOOL_CALLS,
  MAX_RESULT_BYTES,
  MAX_TOOL_CALLS_PER_RUN,
  RUN_CPU_MS,
  RUN_WALL_TIME_MS,
} from "./limits";

/** The compatibility date sandboxes run with. */
const SANDBOX_COMPATIBILITY_DATE = "2026-11-01";

/**
 * Where a run's time went, in ms of the gateway's clock (which advances at I/O, so each is
 * bounded by RPC messages): the start the call waits for (from the catalog being ready to the
 * sandbox's first message back: its first tool call, or its answer), the isolate's whole start
 * (from `loader.load`, asked for while the catalog is listed), the run (from the catalog being
 * ready to the answer), and the time with a tool call in flight.
 */
export type RunTiming = {
  readonly startMs: number;
  readonly isolateMs: number;
  readonly runMs: number;
  readonly toolCallMs: number;
};

/** How a run ended. */
export type RunOutcome = (
  | {
      readonly ok: true;
      readonly value: string | undefined;
      readonly logs: readonly string[];
      readonly logsCut: boolean;
      readonly toolCalls: number;
    }
  | {
      readonly ok: false;
      readonly message: string;
      readonly line?: number;
      readonly logs: readonly string[];
      readonly logsCut: boolean;
      readonly toolCalls: number;
    }
) & { timing?: RunTiming };

/** Runs a tool by the name the caller lists it under, with arguments as JSON text. */
export type ToolRunner = (name: string, args: string, seq: number) => Promise<ToolOutcome>;

const encoder = new TextEncoder();

/** The sandbox's one way back: tool calls of this run, bounded, for as long as the run lasts. */
class CodeHost extends RpcTarget {
  #byPlace: Map<string, string>;
  #run: ToolRunner;
  #calls = 0;
  #running = 0;
  #waiting: (() => void)[] = [];
  #closed = false;
  /** When the sandbox first called back, and how long tool calls were in flight (RunTiming). */
  firstCallAt: number | undefined;
  #busySince = 0;
  busyMs = 0;

  constructor(places: readonly ToolPlace[], run: ToolRunner) {
    super();
    this.#byPlace = new Map(places.map((place) => [`${place.upstream}.${place.tool}`, place.name]));
    this.#run = run;
  }

  get calls(): number {
    return this.#calls;
  }

  close(): void {
    this.#closed = true;
    for (const wake of this.#waiting.splice(0)) wake();
  }

  async call(upstream: unknown, tool: unknown, args: unknown): Promise<ToolOutcome> {
    const name =
      typeof upstream === "string" && typeof tool === "string" ? this.#byPlace.get(`${upstream}.${tool}`) : undefined;
    this.firstCallAt ??= performance.now();
    if (name === undefined) return { ok: false, message: "not a tool you may use" };
    if (this.#closed) return { ok: false, message: `${name}: the run had ended` };
    if (typeof args !== "string" || encoder.encode(args).length > MAX_CALL_ARGUMENT_BYTES)
      return { ok: false, message: `${name}: arguments are JSON of at most ${MAX_CALL_ARGUMENT_BYTES} bytes` };
    if (++this.#calls > MAX_TOOL_CALLS_PER_RUN)
      return { ok: false, message: `${name}: a run makes at most ${MAX_TOOL_CALLS_PER_RUN} tool calls` };
    const seq = this.#calls;
    while (this.#running >= MAX_PARALLEL_TOOL_CALLS && !this.#closed)
      await new Promise<void>((wake) => this.#waiting.push(wake));
    if (this.#closed) return { ok: false, message: `${name}: the run had ended` };
    if (this.#running++ === 0) this.#busySince = performance.now();
    try {
      return await this.#run(name, args, seq);
    } finally {
      if (--this.#running === 0) this.busyMs += performance.now() - this.#busySince;
      this.#waiting.shift()?.();
    }
  }
}

/** The strings of `value` (an array the sandbox answered), within MAX_LOG_BYTES. */
function checkedLogs(value: unknown): { logs: string[]; cut: boolean } {
  const logs: string[] = [];
  let bytes = 0;
  for (const line of Array.isArray(value) ? value : []) {
    if (typeof line !== "string") continue;
    bytes += encoder.encode(line).length + 1;
    if (bytes > MAX_LOG_BYTES) return { logs, cut: true };
    logs.push(line);
  }
  return { logs, cut: false };
}

/** The model's line that an error starting the sandbox names in program.js (a syntax error only V8 finds). */
function startLine(message: string): number | undefined {
  const found = /program\.js:(\d+)/.exec(message);
  return found ? Number(found[1]) - 1 : undefined;
}

/** What the sandbox answered, checked. */
function outcomeOf(answer: unknown, calls: number): RunOutcome {
  if (!isObject(answer))
    return { ok: false, message: "the sandbox gave no answer", logs: [], logsCut: false, toolCalls: calls };
  const { logs, cut } = checkedLogs(answer["logs"]);
  const logsCut = cut || answer["logsCut"] === true;
  if (answer["ok"] !== true) {
    const message = typeof answer["message"] === "string" ? answer["message"].slice(0, 2_000) : "the program failed";
    const line =
      typeof answer["line"] === "number" && Number.isInteger(answer["line"]) && answer["line"] > 0
        ? answer["line"]
        : undefined;
    return { ok: false, message, ...(line !== undefined ? { line } : {}), logs, logsCut, toolCalls: calls };
  }
  const value = answer["value"];
  if (value !== undefined && typeof value !== "string")
    return { ok: false, message: "the program's value could not be read", logs, logsCut, toolCalls: calls };
  if (value !== undefined && encoder.encode(value).length > MAX_RESULT_BYTES) {
    return {
      ok: false,
      message: `the program returned more than ${MAX_RESULT_BYTES} bytes of JSON: return only what is needed`,
      logs,
      logsCut,
      toolCalls: calls,
    };
  }
  return { ok: true, value, logs, logsCut, toolCalls: calls };
}

/**
 * Runs `code` with `tools.<upstream>.<tool>` for each of `places`, each call through `run`.
 * The sandbox is asked for before `places` are known: the platform starts its isolate at
 * once, while the caller's catalog is listed (measured: a run asked for 300 ms after its
 * `load` answers in 1 ms, against about 100 ms at once, under wrangler dev).
 *
 * @example
 * const outcome = await runProgram(env.LOADER, "return await tools.alpha.add({ a: 1, b: 2 })", places, runner);
 */
export async function runProgram(
  loader: WorkerLoader,
  code: string,
  placesToCome: Promise<readonly ToolPlace[]>,
  run: ToolRunner,
): Promise<RunOutcome> {
  const prepared = prepareProgram(code);
  if (!prepared.ok)
    return {
      ok: false,
      message: prepared.message,
      ...(prepared.line !== undefined ? { line: prepared.line } : {}),
      logs: [],
      logsCut: false,
      toolCalls: 0,
    };
  const loadedAt = performance.now();
  const worker = loader.load({
    compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
    mainModule: HARNESS_MODULE,
    modules: sandboxModules(prepared.body),
    globalOutbound: null,
    limits: { cpuMs: RUN_CPU_MS, subRequests: MAX_TOOL_CALLS_PER_RUN },
  });
  let places: readonly ToolPlace[];
  try {
    places = await placesToCome;
  } catch (error) {
    release(worker);
    throw error;
  }
  const readyAt = performance.now();
  const host = new CodeHost(places, run);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<RunOutcome>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          ok: false,
          message: `the program ran longer than ${RUN_WALL_TIME_MS} ms; it was stopped`,
          logs: [],
          logsCut: false,
          toolCalls: host.calls,
        }),
      RUN_WALL_TIME_MS,
    );
  });
  const entrypoint = worker.getEntrypoint() as unknown as {
    run: (host: CodeHost, places: readonly { upstream: string; tool: string }[]) => Promise<unknown>;
  };
  const ran = entrypoint
    .run(
      host,
      places.map(({ upstream, tool }) => ({ upstream, tool })),
    )
    .then(
      (answer) => outcomeOf(answer, host.calls),
      (error: unknown): RunOutcome => {
        const message = error instanceof Error ? error.message : String(error);
        const line = startLine(message);
        // Starting the sandbox failed (a syntax error V8 finds and acorn did not), or the platform ended it (CPU).
        return {
          ok: false,
          message: message
            .replace(/^(Error: )?(Failed to start Worker:\s*)?(Uncaught )?/, "")
            .replace(/\s+at program\.js:\d+$/, "")
            .slice(0, 2_000),
          ...(line !== undefined ? { line } : {}),
          logs: [],
          logsCut: false,
          toolCalls: host.calls,
        };
      },
    );
  try {
    const outcome = await Promise.race([ran, timedOut]);
    const answeredAt = performance.now();
    const firstMessageAt = host.firstCallAt ?? answeredAt;
    const timing = {
      startMs: firstMessageAt - readyAt,
      isolateMs: firstMessageAt - loadedAt,
      runMs: answeredAt - readyAt,
      toolCallMs: host.busyMs,
    };
    return { ...outcome, timing };
  } finally {
    clearTimeout(timer);
    host.close();
    release(entrypoint);
    release(worker);
  }
}

/** Releases a stub of the sandbox now rather than when collected (its isolate can go as soon as nothing holds it). */
function release(stub: unknown): void {
  const dispose =
    typeof stub === "object" && stub !== null ? (stub as { [Symbol.dispose]?: unknown })[Symbol.dispose] : undefined;
  if (typeof dispose !== "function") return;
  try {
    dispose.call(stub);
  } catch {
    // Already released: nothing holds it.
  }
}

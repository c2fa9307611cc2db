/**
 * What the gateway knows about each MCP request method, in one table: what a request
 * invokes, which `params` member its `Mcp-Name` header mirrors, whether it may take
 * several round trips or create a task, and which results are downgraded for a 2025
 * client. Protocol modules (the fronts, the upstream transports, the relay, the call
 * target classifier) consult it instead of each testing method names. Which layers a
 * method goes through is the chain's business (src/chain.ts), not this table's.
 */

/** The protocol facts of one request method; a method absent from the table has none. */
export type MethodFacts = {
  /** A request that invokes the tool or prompt named by `params.name`; a tool's answer is a tool result. */
  readonly invokes?: "tool" | "prompt";
  /**
   * The `params` member a 2026-07-28 request's `Mcp-Name` header mirrors (the transport's
   * "Standard Request Headers"; the `taskId` rows come from the tasks extension's HTTP binding).
   */
  readonly mirroredName?: "name" | "uri" | "taskId";
  /** May answer `input_required` (multi-round-trip, "Supported Requests"). */
  readonly multiRoundTrip?: true;
  /** Task-augmented when its params carry `task`: the answer is a created task (tasks extension). */
  readonly createsTasks?: true;
  /** Its request or its answer carries tool or prompt names (a named server's picks, /mcp's aliases rename them). */
  readonly carriesNames?: true;
  /** What a 2026-07-28 upstream's answer holds that a 2025 client is given downgraded (upstream/downgrade.ts). */
  readonly downgraded?: "tool list" | "tool result";
};

const NONE: MethodFacts = {};

/** The table, by method. */
export const METHODS: Readonly<Record<string, MethodFacts>> = {
  "tools/call": {
    invokes: "tool",
    mirroredName: "name",
    multiRoundTrip: true,
    createsTasks: true,
    carriesNames: true,
    downgraded: "tool result",
  },
  "prompts/get": { invokes: "prompt", mirroredName: "name", multiRoundTrip: true, carriesNames: true },
  "resources/read": { mirroredName: "uri", multiRoundTrip: true },
  "tools/list": { carriesNames: true, downgraded: "tool list" },
  "prompts/list": { carriesNames: true },
  "completion/complete": { carriesNames: true },
  "tasks/get": { mirroredName: "taskId" },
  "tasks/update": { mirroredName: "taskId" },
  "tasks/cancel": { mirroredName: "taskId" },
};

/**
 * The facts of `method` (none for a method the table does not hold, whatever its name).
 *
 * @example
 * methodFacts("prompts/get").invokes; // "prompt"
 */
export function methodFacts(method: string): MethodFacts {
  return Object.hasOwn(METHODS, method) ? METHODS[method]! : NONE;
}

/** The methods the table marks with `fact`, in table order. */
export function methodsWith(fact: keyof MethodFacts): readonly string[] {
  return Object.keys(METHODS).filter((method) => METHODS[method]![fact] !== undefined);
}

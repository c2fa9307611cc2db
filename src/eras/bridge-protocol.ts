/**
 * The bounds of a bridged call (bridged-exchange.ts, held by bridged-calls.ts in the
 * `BridgedCall` Durable Object) and the capabilities it bridges. What the isolate and the object say to
 * each other over Workers RPC is typed in context/object-rpc.ts.
 */

/**
 * How long the Durable Object waits for the client's retry after a question is first asked
 * (retries without the answer do not extend it), then cancels the upstream call. Below the 70 s an idle Durable Object is kept in memory
 * (the upstream stream lives only there), and long enough for a person to answer a form.
 */
export const BRIDGE_RETRY_DEADLINE_MS = 60_000;
/**
 * Objects per principal that hold its bridged calls (each call goes to the first that is
 * not full): reusing objects spares each call an object's creation (see
 * `npm run bench:bridge`) and, filled in order, a handshake (an object keeps the upstream
 * sessions its calls ran in); several hold one principal's concurrent calls. With MAX_CALLS_PER_OBJECT,
 * 96 calls at once per principal (without authentication, every caller is one principal).
 */
export const BRIDGE_OBJECTS_PER_PRINCIPAL = 16;
/**
 * What one object may hold in memory, in bytes: below the 128 MB of a Durable Object's
 * isolate, with room for the runtime. A reset drops every call of the object.
 */
export const BRIDGE_OBJECT_MEMORY_BUDGET_BYTES = 100 * 1024 * 1024;
/**
 * Calls one object holds at once; a full object sends the call to the principal's next.
 * Each may hold, while its round runs, a message up to MAX_HELD_MESSAGE_BYTES (16 MiB) and
 * MAX_HELD_NOTIFICATION_CHARS of notifications (2 bytes a character): 6 such calls stay
 * within BRIDGE_OBJECT_MEMORY_BUDGET_BYTES.
 */
export const MAX_CALLS_PER_OBJECT = 6;
/** Questions one bridged call may ask before the gateway cancels it (a loop of questions is a bug upstream). */
export const MAX_BRIDGE_ROUNDS = 16;
/** Notifications (progress, logs) held per round for the client, in UTF-16 code units of their text; later ones are dropped. */
export const MAX_HELD_NOTIFICATION_CHARS = 256 * 1024;

/** The server-to-client requests of a 2025 upstream that become input requests. */
export const BRIDGED_METHODS: ReadonlyMap<string, string> = new Map([
  ["sampling/createMessage", "sampling"],
  ["elicitation/create", "elicitation"],
  ["roots/list", "roots"],
]);

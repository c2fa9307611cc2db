/**
 * Composing the pipeline: each layer declares the messages it handles (request and
 * notification methods, or every one of them, and the other kinds of client message);
 * one chain is built per declared method, once per configuration, and a message enters
 * only the chain of its method. A message no layer declares goes straight to what is
 * inside the layers (the relay). The order of the list is kept in every chain.
 */
import type { ClientMessage, Handler, Middleware } from "../context/call-context";

/** Every request method, or every notification method. */
export const EVERY = "*";

/** The messages a layer handles; a kind left out passes it by. */
export type Handles = {
  /** Request methods (initialize included), or {@link EVERY}. */
  readonly requests?: readonly string[] | typeof EVERY;
  /** Notification methods, or {@link EVERY}. */
  readonly notifications?: readonly string[] | typeof EVERY;
  /** The client's answers to requests an upstream sent it. */
  readonly responses?: true;
  /** The opening of the stream of messages sent outside any request (the 2025 GET stream). */
  readonly listen?: true;
  /** The end of the client's session (the 2025 DELETE). */
  readonly end?: true;
};

/** Every kind of message, every method. */
export const EVERY_MESSAGE: Handles = {
  requests: EVERY,
  notifications: EVERY,
  responses: true,
  listen: true,
  end: true,
};

/** A middleware with its name (as the printed chain shows it) and the messages it handles. */
export type Layer = { readonly name: string; readonly handles: Handles; readonly wrap: Middleware };

/** Which chain a message enters: a request or notification method, or one of the other kinds. */
export type ChainKey =
  | { readonly kind: "request" | "notification"; readonly method: string }
  | { readonly kind: "response" | "listen" | "end" };

/** A composed pipeline that can say which layers each message goes through. */
export type Chains = {
  readonly handle: Handler;
  /** The names of the layers a message with `key` goes through, outermost first. */
  readonly layersOf: (key: ChainKey) => readonly string[];
};

function covers(declared: readonly string[] | typeof EVERY | undefined, method: string): boolean {
  return declared === EVERY || declared?.includes(method) === true;
}

function handles(layer: Layer, key: ChainKey): boolean {
  switch (key.kind) {
    case "request":
      return covers(layer.handles.requests, key.method);
    case "notification":
      return covers(layer.handles.notifications, key.method);
    case "response":
      return layer.handles.responses === true;
    default:
      return layer.handles[key.kind] === true;
  }
}

/**
 * Wraps `handler` in `middleware`, the first of the list outermost, for every message.
 *
 * @example
 * const handle = composeMiddleware([sysTools(), offload()], relay);
 */
export function composeMiddleware(middleware: readonly Middleware[], handler: Handler): Handler {
  return middleware.reduceRight((next, wrap) => wrap(next), handler);
}

function chain(layers: readonly Layer[], key: ChainKey, handler: Handler): Handler {
  return composeMiddleware(
    layers.filter((layer) => handles(layer, key)).map((layer) => layer.wrap),
    handler,
  );
}

/** The methods `layers` name for `kind` (not the wildcard). */
function declared(layers: readonly Layer[], kind: "requests" | "notifications"): Set<string> {
  const methods = new Set<string>();
  for (const layer of layers) {
    const list = layer.handles[kind];
    if (list !== undefined && list !== EVERY) for (const method of list) methods.add(method);
  }
  return methods;
}

/**
 * One chain per method `layers` declare around `handler`, and one for every other request,
 * every other notification, responses, listen and end (layers declaring {@link EVERY} or
 * the kind). Built once: a message costs one map lookup to find its chain.
 *
 * @example
 * const { handle } = composeChains([{ name: "task results", handles: { requests: ["tasks/result"] }, wrap: taskResults() }], relay);
 */
export function composeChains(layers: readonly Layer[], handler: Handler): Chains {
  const byMethod = (kind: "request" | "notification", list: "requests" | "notifications") => {
    const chains = new Map<string, Handler>();
    for (const method of declared(layers, list)) chains.set(method, chain(layers, { kind, method }, handler));
    return { chains, other: chain(layers, { kind, method: "" }, handler) };
  };
  const requests = byMethod("request", "requests");
  const notifications = byMethod("notification", "notifications");
  const response = chain(layers, { kind: "response" }, handler);
  const listen = chain(layers, { kind: "listen" }, handler);
  const end = chain(layers, { kind: "end" }, handler);
  const handle: Handler = function dispatch(ctx, message: ClientMessage) {
    switch (message.kind) {
      case "request":
        return (requests.chains.get(message.wire.message.method) ?? requests.other)(ctx, message);
      case "notification":
        return (notifications.chains.get(message.wire.message.method) ?? notifications.other)(ctx, message);
      case "response":
        return response(ctx, message);
      case "listen":
        return listen(ctx, message);
      default:
        return end(ctx, message);
    }
  };
  const layersOf = (key: ChainKey) => layers.filter((layer) => handles(layer, key)).map((layer) => layer.name);
  return { handle, layersOf };
}

/**
 * What a request names, resolved once per request from its route (pipeline/call-targets.ts
 * sets it on the call context): the tool or prompt of a `tools/call`, `prompts/get` or a
 * prompt completion, with the upstream it belongs to and the key policy knows it by; or
 * the resource URI of a read, a (un)subscription or a resource completion. Authorization,
 * rules, pinning, offload, output filters, audit and the relay read it instead of each
 * splitting the name again.
 */
import type { JsonRpcRequest } from "../core/jsonrpc";
import { isObject } from "../core/jsonrpc";
import { methodFacts } from "../core/methods";
import { qualifyName, splitName } from "../core/names";
import type { RouteEndpoint } from "./route";

/** Where a tool or prompt name routes. */
export type NamedAt = {
  /** The upstream it belongs to (on /mcp, the prefix of the name: not checked against the configured upstreams). */
  readonly upstream: string;
  /** The upstream's own name for it: split from the client's on /mcp (a shortened name is resolved by the relay), as sent on /mcp/<upstream>. */
  readonly name: string;
  /** `<upstream>___<name>`: the key filters, offload, rules, personas and pins know it by on every route. */
  readonly key: string;
  /** On /mcp: the name may be a shortened one (the relay lists the upstream to find its own). */
  readonly maybeShortened: boolean;
};

/** A request's target. */
export type CallTarget =
  | {
      readonly kind: "tool" | "prompt";
      /** The name as the client sent it. */
      readonly sent: string;
      /** Where it routes; absent for a name on /mcp that names no upstream. */
      readonly at?: NamedAt;
    }
  | { readonly kind: "resource"; readonly uri: string };

function named(route: RouteEndpoint, kind: "tool" | "prompt", sent: unknown): CallTarget | undefined {
  if (typeof sent !== "string") return undefined;
  if (route.kind === "upstream") {
    const upstream = route.upstream.name;
    return { kind, sent, at: { upstream, name: sent, key: qualifyName(upstream, sent), maybeShortened: false } };
  }
  const split = splitName(sent);
  return split
    ? {
        kind,
        sent,
        at: { upstream: split.upstream, name: split.name, key: sent, maybeShortened: split.maybeShortened },
      }
    : { kind, sent };
}

function resource(uri: unknown): CallTarget | undefined {
  return typeof uri === "string" ? { kind: "resource", uri } : undefined;
}

/**
 * The target of `request` on `route`; undefined for a method that names none, or a name
 * or URI that is not a string (the layer that handles the method refuses those).
 *
 * @example
 * callTarget({ kind: "aggregated" }, { jsonrpc: "2.0", id: 1, method: "prompts/get", params: { name: "alpha___greet" } });
 * // { kind: "prompt", sent: "alpha___greet", at: { upstream: "alpha", name: "greet", key: "alpha___greet", maybeShortened: false } }
 */
export function callTarget(route: RouteEndpoint, request: JsonRpcRequest): CallTarget | undefined {
  const { method, params } = request;
  const invokes = methodFacts(method).invokes;
  if (invokes !== undefined) return named(route, invokes, params?.["name"]);
  switch (method) {
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe":
      return resource(params?.["uri"]);
    case "completion/complete": {
      const ref = params?.["ref"];
      if (!isObject(ref)) return undefined;
      if (ref["type"] === "ref/prompt") return named(route, "prompt", ref["name"]);
      return ref["type"] === "ref/resource" ? resource(ref["uri"]) : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Where the tool or prompt a request names routes; undefined for a resource, no target,
 * or a name that names no upstream.
 *
 * @example
 * const at = namedAt(ctx.target); // { upstream: "alpha", name: "echo", key: "alpha___echo", ... }
 */
export function namedAt(target: CallTarget | undefined): NamedAt | undefined {
  return target && target.kind !== "resource" ? target.at : undefined;
}

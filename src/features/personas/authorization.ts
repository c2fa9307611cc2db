/**
 * Authorization: what the caller's personas (persona.ts, chosen by the roles the
 * credential carries) let them see and call. Lists show only what the grant permits;
 * a call, prompt or completion of anything else is refused with the same error the relay
 * gives for a name nothing serves, so a refusal never says whether the tool exists.
 * What is judged by upstream (resources and their templates, subscriptions, tasks, the
 * upstreams' instructions at `initialize` and `server/discover`) only ever reaches, and
 * is only heard from, the upstreams the grant reaches: no other upstream is sent the
 * request, nor the client's notifications and `logging/setLevel`. The persona goes on
 * the call record.
 *
 * Active only when authentication is on (AUTH); with no persona for the caller's roles
 * and no default persona, the caller may call nothing (default deny); the call record
 * names why (no-persona.ts, which also warns in the log). A broken personas
 * document fails closed the same way. The gateway's own tool (`sys___read_payload`) reads
 * only what the caller's own calls stored, and is always allowed; no other name is exempt
 * (an upstream's `sys___` names never pass for the gateway's: features/offload/sys-tools.ts).
 */
import { Answer } from "../../context/answer";
import { GatewayError } from "../../core/errors";
import { GatewayFailure } from "../../core/failures";
import { isObject, resultText, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../../core/jsonrpc";
import { READ_PAYLOAD_TOOL } from "../../core/names";
import { keepListed } from "../../core/raw-json-lists";
import { pathSpan, removeMemberSplice, splice } from "../../core/raw-json";
import { methodFacts } from "../../core/methods";
import type { AuthConfig } from "../../config/auth-config";
import { onRequests, toolKey, type CallContext, type MethodHandler, type Middleware } from "../../context/call-context";
import type { Grant } from "../../context/grant";
import { permits, permitsUpstream } from "./persona";
import { PAYLOAD_URI_PREFIX } from "../../storage/payload-store";
import { TASK_METHODS, unknownTask } from "../tasks/tasks";
import { explainNoPersona, NOT_ALLOWED } from "./no-persona";

const RESOURCE_NOT_FOUND = -32002;
/** Shown on the call record when no persona applies. */
export const NO_PERSONA = "(none)";

export type AuthorizationOptions = {
  readonly auth: AuthConfig;
};

/** The gateway's own tools, allowed to every caller: exactly these names, nothing else under `sys___`. */
const GATEWAY_TOOLS: ReadonlySet<string> = new Set([READ_PAYLOAD_TOOL]);

/** The policy key of a tool or prompt name on this route (names on /mcp carry their upstream already). */
function nameKey(ctx: CallContext, name: string): string | undefined {
  // The gateway's own tools keep their name on every route.
  if (GATEWAY_TOOLS.has(name)) return name;
  return toolKey(ctx.route, name)?.key;
}

/** The policy key of the tool or prompt the request names (its target); a gateway tool keeps its own name. */
function targetKey(ctx: CallContext): string | undefined {
  const { target } = ctx;
  if (target === undefined || target.kind === "resource") return undefined;
  return GATEWAY_TOOLS.has(target.sent) ? target.sent : target.at?.key;
}

/** The most characters of a client's name or URI an error repeats. */
const MAX_SHOWN_CHARS = 256;

/** A client's name or URI as an error shows it: a string (cut to MAX_SHOWN_CHARS), or what else it was. */
function shown(value: unknown): string {
  if (typeof value !== "string")
    return `(${value === null ? "null" : value === undefined ? "none" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`}, not a string)`;
  return value.length > MAX_SHOWN_CHARS ? `${value.slice(0, MAX_SHOWN_CHARS)}…` : value;
}

function unknownName(label: string, name: unknown, id: JsonRpcId): GatewayFailure {
  return new GatewayFailure({ reason: "unknown-name", label, name: shown(name) }, id);
}

/** `ctx` with the route's upstreams narrowed to those the grant reaches (for lists merged on /mcp). */
function withReachableUpstreams(ctx: CallContext, grant: Grant | undefined): CallContext {
  return {
    ...ctx,
    route: { ...ctx.route, upstreams: ctx.route.upstreams.filter((upstream) => permitsUpstream(grant, upstream.name)) },
  };
}

/** True on /mcp/<upstream> when the grant does not reach its upstream. */
function outOfReach(ctx: CallContext, grant: Grant | undefined): boolean {
  return ctx.route.kind === "upstream" && !permitsUpstream(grant, ctx.route.upstream.name);
}

/**
 * A request about the resource `uri` (read, subscribe, completion): on /mcp/<upstream>
 * refused unless the grant reaches that upstream; on /mcp only the upstreams it reaches
 * are asked (and an answer from any other would be withheld).
 */
async function reachResource(
  ctx: CallContext,
  grant: Grant | undefined,
  uri: unknown,
  request: WireMessage<JsonRpcRequest>,
  next: MethodHandler,
): Promise<Answer> {
  const notFound = () =>
    new GatewayError(
      200,
      RESOURCE_NOT_FOUND,
      `Resource not found: ${shown(uri)} (no upstream serves it)`,
      { uri },
      request.message.id,
    );
  if (outOfReach(ctx, grant)) throw notFound();
  const answer = await next(withReachableUpstreams(ctx, grant), request);
  if (answer.from.upstream !== undefined && !permitsUpstream(grant, answer.from.upstream)) throw notFound();
  return answer;
}

/** An answer to initialize or server/discover without the upstream's `instructions`. */
function withoutInstructions(text: string): string {
  const result = pathSpan(text, ["result"]);
  const edit =
    result && text.charCodeAt(result.start) === 0x7b ? removeMemberSplice(text, result, "instructions") : undefined;
  return edit ? splice(text, [edit]) : text;
}

/** An empty first page of the list at `key`, for /mcp/<upstream> when the grant does not reach its upstream (nothing is asked). */
function emptyList(id: JsonRpcId, key: string): Answer {
  return Answer.ofText(resultText(id, { [key]: [] }));
}

/**
 * The authorization middleware.
 *
 * @example
 * composeMiddleware([authorization({ auth: config.auth.value }), sysTools()], relay);
 */
export function authorization({ auth }: AuthorizationOptions): Middleware {
  if (auth.mode !== "on") return (next) => next;
  const requests = onRequests(
    (next) =>
      async function authorization(ctx, request) {
        const { method, id, params } = request.message;
        if (method === "ping") return next(ctx, request);
        const grant = await ctx.grant();
        ctx.record.persona = grant?.persona ?? NO_PERSONA;
        if (!grant) await explainNoPersona(ctx);
        const allowed = (key: string | undefined) =>
          key !== undefined && (GATEWAY_TOOLS.has(key) || permits(grant, key));
        // A refused call says no more than an unknown name would; the record says why
        // (without a grant, explainNoPersona noted the cause already).
        const refused = (label: string, name: unknown) => {
          if (grant) ctx.record.denied = NOT_ALLOWED;
          return unknownName(label, name, id);
        };
        // A call of a tool or prompt (core/methods.ts): only one the grant permits.
        const invokes = methodFacts(method).invokes;
        if (invokes !== undefined) {
          if (!allowed(targetKey(ctx))) throw refused(invokes, params?.["name"]);
          return next(ctx, request);
        }
        switch (method) {
          case "initialize":
          case "server/discover":
            // On /mcp only the upstreams the grant reaches are opened and speak (their instructions, overridden or not);
            // on /mcp/<upstream> one it does not reach keeps its instructions to itself.
            if (ctx.route.kind === "aggregated") return next(withReachableUpstreams(ctx, grant), request);
            return outOfReach(ctx, grant) ? (await next(ctx, request)).map(withoutInstructions) : next(ctx, request);
          case "tools/list":
            return (await next(ctx, request)).map((text) =>
              keepListed(text, "tools", (name) => name !== undefined && allowed(nameKey(ctx, name))),
            );
          case "prompts/list":
            return (await next(ctx, request)).map((text) =>
              keepListed(text, "prompts", (name) => name !== undefined && allowed(nameKey(ctx, name))),
            );
          case "resources/templates/list":
            // On /mcp templates keep their upstream's own names: they are judged by upstream, as resources are.
            if (ctx.route.kind === "aggregated") return next(withReachableUpstreams(ctx, grant), request);
            if (outOfReach(ctx, grant)) return emptyList(id, "resourceTemplates");
            return (await next(ctx, request)).map((text) =>
              keepListed(
                text,
                "resourceTemplates",
                (name) => name === "payload" || (name !== undefined && allowed(toolKey(ctx.route, name)?.key)),
              ),
            );
          case "resources/list":
            // Resources are judged by upstream: the merged list asks only the upstreams the persona reaches,
            // and on /mcp/<upstream> a persona that cannot reach it lists none (the upstream is not asked).
            if (outOfReach(ctx, grant)) return emptyList(id, "resources");
            return next(withReachableUpstreams(ctx, grant), request);
          case "completion/complete": {
            const ref = params?.["ref"];
            if (isObject(ref) && ref["type"] === "ref/prompt" && !allowed(targetKey(ctx))) {
              throw refused("prompt", ref["name"]);
            }
            if (isObject(ref) && ref["type"] === "ref/resource")
              return reachResource(ctx, grant, ref["uri"], request, next);
            return next(ctx, request);
          }
          case "resources/read": {
            const uri = params?.["uri"];
            // A payload of the caller's own is read by sys-tools; without a bucket, only reachable upstreams are asked, as for any URI.
            if (typeof uri === "string" && uri.startsWith(PAYLOAD_URI_PREFIX))
              return next(withReachableUpstreams(ctx, grant), request);
            // Fresh or a retry (requestState, which carries the client's input to the upstream that asked): only an upstream the grant reaches is ever sent it.
            return reachResource(ctx, grant, uri, request, next);
          }
          case "subscriptions/listen":
            // Notifications come only from the upstreams the grant reaches, on either route.
            return next(withReachableUpstreams(ctx, grant), request);
          case "resources/subscribe":
          case "resources/unsubscribe":
            // These act at the upstream: on /mcp only the upstreams the grant reaches are asked.
            return reachResource(ctx, grant, params?.["uri"], request, next);
          case "logging/setLevel":
            // Sent on to each upstream that logs: only those the grant reaches.
            return next(withReachableUpstreams(ctx, grant), request);
          case "tasks/list":
            // Only the upstreams the grant reaches are asked (and each shows only the caller's own tasks: features/tasks/tasks.ts).
            if (outOfReach(ctx, grant)) return emptyList(id, "tasks");
            return next(withReachableUpstreams(ctx, grant), request);
          default:
            if (TASK_METHODS.has(method)) {
              // A task of an upstream the grant does not reach answers as no task at all; on /mcp the relay finds none there.
              if (outOfReach(ctx, grant)) throw unknownTask(params?.["taskId"], id);
              return next(withReachableUpstreams(ctx, grant), request);
            }
            return next(ctx, request);
        }
      },
  );
  return (next) => {
    const handleRequests = requests(next);
    return async function authorizationOfStreams(ctx, message) {
      if (message.kind !== "listen" && message.kind !== "notification") return handleRequests(ctx, message);
      // A 2025 client's GET stream: only the upstreams the grant reaches are listened to, as for subscriptions/listen;
      // a client notification (cancelled, roots changed, progress) goes only to those upstreams too.
      const grant = await ctx.grant();
      return next(withReachableUpstreams(ctx, grant), message);
    };
  };
}

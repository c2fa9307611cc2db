/**
 * Authorization: what the caller's personas (policy/persona.ts, chosen by the roles the
 * credential carries) let them see and call. Lists show only what the grant permits;
 * a call, prompt or completion of anything else is refused with the same error the relay
 * gives for a name nothing serves, so a refusal never says whether the tool exists.
 * `resources/read` (and, on /mcp/<upstream>, `resources/list`) follows the upstream of the
 * URI. The persona goes on the call record.
 *
 * Active only when authentication is on (AUTH); with no persona for the caller's roles
 * and no default persona, the caller may call nothing (default deny). A broken personas
 * document fails closed the same way. The gateway's own tools (`sys___`) read only what
 * the caller's own calls stored, and are always allowed.
 */
import { GatewayError } from "../core/errors";
import { INVALID_PARAMS, isObject, type JsonRpcId } from "../core/jsonrpc";
import { qualifyName, SYS_PREFIX } from "../core/names";
import { keepListed } from "../core/raw-json-lists";
import type { AuthConfig } from "../config/auth-config";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../config/gateway-config";
import { onRequests, toolKey, type CallContext, type Middleware } from "../context/call-context";
import { grantFor, permits, permitsUpstream, PERSONAS_KEY, checkPersonas, type Grant } from "../policy/persona";
import { loadDocument } from "../storage/document-store";
import { PAYLOAD_URI_PREFIX } from "../storage/payload-store";

const RESOURCE_NOT_FOUND = -32002;
/** Shown on the call record when no persona applies. */
export const NO_PERSONA = "(none)";

export type AuthorizationOptions = {
  readonly auth: AuthConfig;
  /** How long an isolate trusts its copy of the personas document. */
  readonly cacheTtlMs?: number;
};

/**
 * The grant of the caller of `ctx`: undefined when none applies (default deny).
 *
 * @example
 * const grant = await callerGrant(ctx, 30_000);
 */
export async function callerGrant(ctx: CallContext, cacheTtlMs: number): Promise<Grant | undefined> {
  const kv = ctx.services.kv;
  if (!kv) return undefined;
  const stored = await loadDocument(kv, PERSONAS_KEY, cacheTtlMs, checkPersonas);
  return stored.state === "valid" ? grantFor(stored.value, ctx.identity.roles) : undefined;
}

function isSys(key: string): boolean {
  return key.startsWith(SYS_PREFIX);
}

/** The policy key of a prompt or template name on this route (names on /mcp carry their upstream already). */
function nameKey(ctx: CallContext, name: string): string | undefined {
  // The gateway's own tools keep their `sys___` name on every route.
  if (isSys(name)) return name;
  return toolKey(ctx.route, name)?.key;
}

function unknownName(label: string, name: unknown, id: JsonRpcId): GatewayError {
  return new GatewayError(200, INVALID_PARAMS, `Unknown ${label}: ${String(name)}`, undefined, id);
}

/** `ctx` with the route's upstreams narrowed to those the grant reaches (for lists merged on /mcp). */
function withReachableUpstreams(ctx: CallContext, grant: Grant | undefined): CallContext {
  return { ...ctx, route: { ...ctx.route, upstreams: ctx.route.upstreams.filter((upstream) => permitsUpstream(grant, upstream.name)) } };
}

/**
 * A request about the resource `uri` (read, subscribe, completion): on /mcp/<upstream>
 * refused unless the grant reaches that upstream; on /mcp `forward` asks only the
 * upstreams it reaches, and an answer from any other is withheld.
 */
async function reachResource(ctx: CallContext, grant: Grant | undefined, uri: unknown, id: JsonRpcId, forward: () => Promise<string>): Promise<string> {
  const notFound = () => new GatewayError(200, RESOURCE_NOT_FOUND, `Resource not found: ${String(uri)} (no upstream serves it)`, { uri }, id);
  if (!ctx.route.aggregated && !permitsUpstream(grant, ctx.route.upstreams[0]!.name)) throw notFound();
  const answer = await forward();
  if (ctx.record.upstream !== undefined && !permitsUpstream(grant, ctx.record.upstream)) throw notFound();
  return answer;
}

/**
 * The authorization middleware.
 *
 * @example
 * composeMiddleware([authorization({ auth: config.auth.value, cacheTtlMs: 30_000 }), sysTools()], relay);
 */
export function authorization({ auth, cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: AuthorizationOptions): Middleware {
  if (auth.mode !== "on") return (next) => next;
  const requests = onRequests((next) =>
    async function authorization(ctx, request) {
      const { method, id, params } = request.message;
      if (method === "initialize" || method === "ping") return next(ctx, request);
      const grant = await callerGrant(ctx, cacheTtlMs);
      ctx.record.persona = grant?.persona ?? NO_PERSONA;
      const allowed = (key: string | undefined) => key !== undefined && (isSys(key) || permits(grant, key));
      switch (method) {
        case "tools/list":
          return keepListed(await next(ctx, request), "tools", (name) => name !== undefined && allowed(nameKey(ctx, name)));
        case "prompts/list":
          return keepListed(await next(ctx, request), "prompts", (name) => name !== undefined && allowed(nameKey(ctx, name)));
        case "resources/templates/list":
          // On /mcp templates keep their upstream's own names: they are judged by upstream, as resources are.
          if (ctx.route.aggregated) return next(withReachableUpstreams(ctx, grant), request);
          return keepListed(await next(ctx, request), "resourceTemplates", (name) => name === "payload" || (name !== undefined && allowed(qualifyName(ctx.route.upstreams[0]!.name, name))));
        case "resources/list":
          // Resources are judged by upstream: the merged list asks only the upstreams the persona reaches,
          // and on /mcp/<upstream> a persona that cannot reach it lists none.
          if (ctx.route.aggregated) return next(withReachableUpstreams(ctx, grant), request);
          if (permitsUpstream(grant, ctx.route.upstreams[0]!.name)) return next(ctx, request);
          return keepListed(await next(ctx, request), "resources", () => false);
        case "tools/call":
          if (!allowed(typeof params?.["name"] === "string" ? nameKey(ctx, params["name"]) : undefined)) throw unknownName("tool", params?.["name"], id);
          return next(ctx, request);
        case "prompts/get":
          if (!allowed(typeof params?.["name"] === "string" ? nameKey(ctx, params["name"]) : undefined)) throw unknownName("prompt", params?.["name"], id);
          return next(ctx, request);
        case "completion/complete": {
          const ref = params?.["ref"];
          if (isObject(ref) && ref["type"] === "ref/prompt" && !allowed(typeof ref["name"] === "string" ? nameKey(ctx, ref["name"]) : undefined)) throw unknownName("prompt", ref["name"], id);
          if (isObject(ref) && ref["type"] === "ref/resource") return reachResource(ctx, grant, ref["uri"], id, () => next(withReachableUpstreams(ctx, grant), request));
          return next(ctx, request);
        }
        case "resources/read": {
          const uri = params?.["uri"];
          if (typeof uri === "string" && uri.startsWith(PAYLOAD_URI_PREFIX)) return next(ctx, request);
          // A read changes nothing: on /mcp the relay finds the URI's upstream, and an answer from one the grant does not reach is withheld.
          // A retry (requestState) carries the client's input to the upstream that asked: only one the grant still reaches may get it.
          const retry = ctx.route.aggregated && params?.["requestState"] !== undefined;
          return reachResource(ctx, grant, uri, id, () => next(retry ? withReachableUpstreams(ctx, grant) : ctx, request));
        }
        case "subscriptions/listen":
          // Notifications come only from the upstreams the grant reaches, on either route.
          return next(withReachableUpstreams(ctx, grant), request);
        case "resources/subscribe":
        case "resources/unsubscribe":
          // These act at the upstream: on /mcp only the upstreams the grant reaches are asked.
          return reachResource(ctx, grant, params?.["uri"], id, () => next(withReachableUpstreams(ctx, grant), request));
        default:
          return next(ctx, request);
      }
    });
  return (next) => {
    const handleRequests = requests(next);
    return async function authorizationOfStreams(ctx, message) {
      if (message.kind !== "listen") return handleRequests(ctx, message);
      // A 2025 client's GET stream: only the upstreams the grant reaches are listened to, as for subscriptions/listen.
      const grant = await callerGrant(ctx, cacheTtlMs);
      return next(withReachableUpstreams(ctx, grant), message);
    };
  };
}

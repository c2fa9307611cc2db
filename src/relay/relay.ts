/**
 * The innermost method handler: sends each client request to the upstream that owns it.
 *
 * On /mcp/<upstream> every request is forwarded as it came, but for task ids (the
 * gateway's, bound to the caller: plugs.ts). On /mcp, names are routed by their
 * `<upstream>___` prefix (and rewritten to the upstream's own name), resource URIs by
 * which upstream listed them, tasks by the upstream their id names, lists are merged,
 * and a few methods are answered for all upstreams at once.
 */
import { GatewayError, ok } from "../core/errors";
import { GatewayFailure } from "../core/failures";
import { INVALID_PARAMS, isObject, resultText, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { methodFacts } from "../core/methods";
import { qualifyName } from "../core/names";
import { elements, member, parseSpan, pathSpan, splice } from "../core/raw-json";
import { heldSession } from "../upstream/upstream-session";
import { poolRequest, type CallContext, type MethodHandler } from "../context/call-context";
import { Answer } from "../context/answer";
import type { UpstreamConfig } from "../config/upstreams";
import { appUriTarget, shownReadAnswer } from "./app-resource-uris";
import { forward, toClient } from "./forward";
import { forwardList } from "./cached-list";
import { LISTS, mergeList } from "./merge-lists";
import { sendToUpstream, upstreamMessages } from "../upstream/pool";
import { followPages, listRequest, type PageSource } from "../upstream/list-pages";
import type { RelayTasks, SendToUpstream } from "./plugs";
import { multiRoundTrip, type RouteRequest } from "../eras/multi-round-trip";

/** Resource URIs whose upstream an isolate remembers. */
export const URI_OWNER_ENTRIES = 10_000;
/** A longer URI is not remembered: upstreams choose URIs, and a read of one asks every upstream, as any miss does. */
export const MAX_REMEMBERED_URI_CHARS = 2_048;
/** Characters of all remembered URIs together (1 or 2 bytes each on V8's heap): about 2 MB at most. */
export const URI_OWNER_MAX_CHARS = 1_000_000;
/** MCP's "resource not found". */
const RESOURCE_NOT_FOUND = -32002;

/** Which upstream listed each resource URI (an isolate cache; a miss asks every upstream). */
const uriOwners = new Map<string, string>();
let uriOwnerChars = 0;

/** Remembers `uri`'s owner within the bounds; past either bound the cache starts afresh. */
function rememberOwner(uri: string, upstream: string): void {
  if (uri.length > MAX_REMEMBERED_URI_CHARS) return;
  if (!uriOwners.has(uri)) {
    if (uriOwners.size >= URI_OWNER_ENTRIES || uriOwnerChars + uri.length > URI_OWNER_MAX_CHARS) {
      uriOwners.clear();
      uriOwnerChars = 0;
    }
    uriOwnerChars += uri.length;
  }
  uriOwners.set(uri, upstream);
}

/**
 * Records who serves the URIs an upstream listed. Where two upstreams list one URI, the
 * first in UPSTREAMS keeps it, whichever page or list showed it last.
 */
export function rememberUris(
  ctx: Pick<CallContext, "route">,
  upstream: string,
  items: readonly { uri?: string }[],
): void {
  const rank = (name: string | undefined) => ctx.route.upstreams.findIndex((u) => u.name === name);
  for (const item of items) {
    if (item.uri === undefined) continue;
    const owner = rank(uriOwners.get(item.uri));
    if (owner !== -1 && owner < rank(upstream)) continue;
    rememberOwner(item.uri, upstream);
  }
}

/**
 * The upstream this isolate last saw serve `uri` (by listing or reading it), if any.
 *
 * @example
 * knownUriOwner("alpha://info"); // "alpha" once a resources/list or read showed it
 */
export function knownUriOwner(uri: string): string | undefined {
  return uriOwners.get(uri);
}

/** Replaces the string at `path` in the request text with `value`, keeping every other byte. */
function rewriteString(text: string, path: readonly string[], value: string): string {
  const span = pathSpan(text, path);
  if (!span) return text;
  return splice(text, [{ span, raw: JSON.stringify(value) }]);
}

/** `forward` with the tasks plug, as a task method's route sends it. */
function sendWith(tasks: RelayTasks): SendToUpstream {
  return (ctx, upstream, text, id) => forward(ctx, upstream, text, id, tasks);
}

/** Pages of an upstream's list `resolveShortened` reads at most to find a shortened name. */
const MAX_RESOLVE_PAGES = 100;

/** Finds the upstream tool or prompt behind a shortened aggregated name by listing the upstream. */
async function resolveShortened(
  ctx: CallContext,
  upstream: UpstreamConfig,
  qualified: string,
  listMethod: string,
  key: string,
  tasks: RelayTasks,
): Promise<string | undefined> {
  let found: string | undefined;
  const pages: PageSource = async (cursor) => {
    const { text, message } = listRequest(listMethod, "gw-resolve", cursor);
    return ok((await forwardList(ctx, upstream, listMethod, message.params, text, "gw-resolve", tasks)).text);
  };
  const walk = await followPages(
    upstream.name,
    listMethod,
    pages,
    (answer, result) => {
      const list = result.find((field) => field.key === key)?.value;
      for (const span of list && answer.charCodeAt(list.start) === 0x5b ? elements(answer, list) : []) {
        const nameSpan = answer.charCodeAt(span.start) === 0x7b ? member(answer, span, "name") : undefined;
        const name = nameSpan ? parseSpan(answer, nameSpan) : undefined;
        if (typeof name === "string" && qualifyName(upstream.name, name) === qualified) {
          found = name;
          return "stop";
        }
      }
      return undefined;
    },
    { maxPages: MAX_RESOLVE_PAGES },
  );
  return walk.ok ? found : undefined;
}

/** Where a tool's or a prompt's own name is listed (a shortened name is resolved there), and what the client is told it is. */
const NAMED_LISTS = {
  tool: { method: "tools/list", key: "tools", label: "tool" },
  prompt: { method: "prompts/list", key: "prompts", label: "prompt" },
} as const;

async function routeByName(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  path: readonly string[],
  list: { method: string; key: string; label: string },
  tasks: RelayTasks,
): Promise<Answer> {
  const { id } = request.message;
  const { target } = ctx;
  const unknown = (name: string) => new GatewayFailure({ reason: "unknown-name", label: list.label, name }, id);
  // The pipeline's classifier resolved the name (context/call-target.ts); no target: it was not a string.
  if (target === undefined || target.kind === "resource")
    throw new GatewayError(200, INVALID_PARAMS, `Invalid params: ${path.join(".")} must be a string`, undefined, id);
  const parsed = target.at;
  const upstream = parsed && ctx.route.upstreams.find((u) => u.name === parsed.upstream);
  if (!parsed || !upstream) throw unknown(target.sent);
  let name: string | undefined = parsed.name;
  if (parsed.maybeShortened)
    name = (await resolveShortened(ctx, upstream, target.sent, list.method, list.key, tasks)) ?? parsed.name;
  const answer = await forward(ctx, upstream, rewriteString(request.text, ["params", ...path], name), id, tasks);
  // A task-augmented call answers with a task: the caller's, and its id must say which upstream runs it.
  const { method, params } = request.message;
  return methodFacts(method).createsTasks && isObject(params?.["task"])
    ? tasks.created(ctx, upstream.name, answer, method)
    : answer;
}

function isResourceNotFound(answer: string): boolean {
  // An error member comes after the result's text, if any: a large read is scanned only when it names no error.
  if (!answer.includes('"error"')) return false;
  const error = pathSpan(answer, ["error"]);
  if (!error) return false;
  const detail = parseSpan(answer, error);
  return isObject(detail) && (detail["code"] === RESOURCE_NOT_FOUND || detail["code"] === INVALID_PARAMS);
}

async function routeByUri(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  path: readonly string[],
  tasks: RelayTasks,
): Promise<Answer> {
  const { id } = request.message;
  const { target } = ctx;
  // No target: the classifier found no URI string there (context/call-target.ts).
  if (target?.kind !== "resource")
    throw new GatewayError(200, INVALID_PARAMS, `Invalid params: ${path.join(".")} must be a string`, undefined, id);
  const { uri } = target;
  // An MCP App's resource, as /mcp shows it: read from its upstream under the URI it listed.
  const app = ctx.route.kind === "aggregated" ? appUriTarget(uri) : undefined;
  const appUpstream = app && ctx.route.upstreams.find((u) => u.name === app.upstream);
  if (app && appUpstream) {
    const answer = await forward(
      ctx,
      appUpstream,
      rewriteString(request.text, ["params", ...path], app.uri),
      id,
      tasks,
    );
    return answer.withText(shownReadAnswer(answer.text, appUpstream.name));
  }
  const owner = ctx.route.upstreams.find((u) => u.name === uriOwners.get(uri));
  const candidates = ctx.route.upstreams.filter((upstream) => {
    const session = heldSession(ctx.upstreamClient, upstream.name);
    return upstream !== owner && (!session || session.capabilities.includes("resources"));
  });
  let firstAnswer: Answer | undefined;
  for (const upstream of owner ? [owner, ...candidates] : candidates) {
    let answer: Answer;
    try {
      answer = await forward(ctx, upstream, request.text, id, tasks);
    } catch (error) {
      if (upstream === owner) throw error;
      continue; // an upstream that is down cannot own the URI for this request
    }
    if (!isResourceNotFound(answer.text)) {
      if (!answer.text.includes('"error"') || !pathSpan(answer.text, ["error"])) rememberOwner(uri, upstream.name);
      return answer;
    }
    firstAnswer ??= answer;
  }
  if (firstAnswer !== undefined) return firstAnswer;
  throw new GatewayError(200, RESOURCE_NOT_FOUND, `Resource not found: ${uri} (no upstream serves it)`, { uri }, id);
}

/** Sends `logging/setLevel` to every upstream that logs; the level applies gateway-wide for the session. */
async function broadcastLevel(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  tasks: RelayTasks,
): Promise<Answer> {
  const targets = ctx.route.upstreams.filter((upstream) =>
    heldSession(ctx.upstreamClient, upstream.name)?.capabilities.includes("logging"),
  );
  await Promise.all(
    targets.map(async (upstream) => {
      try {
        await forward(ctx, upstream, request.text, request.message.id, tasks);
      } catch (error) {
        console.warn(`mcp-edge-gateway: logging/setLevel: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );
  return Answer.ofText(resultText(request.message.id, {}));
}

async function aggregatedRelay(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  tasks: RelayTasks,
): Promise<Answer> {
  const { method, id, params } = request.message;
  const list = LISTS.get(method);
  if (list) {
    const remember = (upstream: string, items: readonly { uri?: string }[]) => rememberUris(ctx, upstream, items);
    return Answer.ofText(
      await mergeList(ctx, request, list, tasks, list.method === "resources/list" ? remember : undefined),
    );
  }
  // A call of a tool or prompt (core/methods.ts) goes to the upstream its name routes to.
  const invokes = methodFacts(method).invokes;
  if (invokes !== undefined) return routeByName(ctx, request, ["name"], NAMED_LISTS[invokes], tasks);
  switch (method) {
    case "ping":
      return Answer.ofText(resultText(id, {}));
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe":
      return routeByUri(ctx, request, ["uri"], tasks);
    case "completion/complete": {
      const ref = params?.["ref"];
      if (isObject(ref) && ref["type"] === "ref/prompt")
        return routeByName(ctx, request, ["ref", "name"], NAMED_LISTS.prompt, tasks);
      if (isObject(ref) && ref["type"] === "ref/resource") return routeByUri(ctx, request, ["ref", "uri"], tasks);
      throw new GatewayError(
        200,
        INVALID_PARAMS,
        'Invalid params: ref.type must be "ref/prompt" or "ref/resource"',
        undefined,
        id,
      );
    }
    case "logging/setLevel":
      return broadcastLevel(ctx, request, tasks);
    default:
      if (tasks.methods.has(method)) return tasks.route(ctx, request, sendWith(tasks));
      throw new GatewayFailure({ reason: "unknown-method", method }, id);
  }
}

/** A request on /mcp/<upstream>: as it came, but that task ids are the gateway's (bound to the caller) and task lists the caller's own. */
async function transparentRelay(
  ctx: CallContext,
  upstream: UpstreamConfig,
  request: WireMessage<JsonRpcRequest>,
  tasks: RelayTasks,
): Promise<Answer> {
  const { method, params, id } = request.message;
  if (tasks.methods.has(method)) return tasks.route(ctx, request, sendWith(tasks));
  const answer = await forwardList(ctx, upstream, method, params, request.text, id, tasks);
  if (method === "tasks/list")
    return answer.withText(await tasks.ownList(ctx, upstream.name, answer.text, tasks.ownedBy(ctx)));
  return methodFacts(method).createsTasks && isObject(params?.["task"])
    ? tasks.created(ctx, upstream.name, answer, method)
    : answer;
}

/**
 * What runs around a request's work at the upstreams: the sign-in prompt of upstreams that
 * act as each user (features/upstream-sign-in/sign-in-required.ts), given by the composition
 * root. `route` does the work with the context it is given (a retry whose answer the wrapper
 * reads passes one that says so); the answer is its answer, or what the wrapper answers instead.
 */
export type AroundUpstream = (
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  route: (ctx: CallContext) => Promise<Answer>,
) => Promise<Answer>;

/** Routes a request; a multi-round-trip retry's resource read goes straight to the upstream that asked. */
function requestRouter(around: AroundUpstream, tasks: RelayTasks): RouteRequest {
  return (given, request, pinned) =>
    around(given, request, (ctx) => {
      if (pinned && request.message.method === "resources/read")
        return forward(ctx, pinned, request.text, request.message.id, tasks);
      return ctx.route.kind === "upstream"
        ? transparentRelay(ctx, ctx.route.upstream, request, tasks)
        : aggregatedRelay(ctx, request, tasks);
    });
}

/** Relays a client request to the upstream (or upstreams) that serve it; input_required answers and their retries pass eras/multi-round-trip.ts. */
export function requestRelay(around: AroundUpstream, tasks: RelayTasks): MethodHandler {
  const routeRequest = requestRouter(around, tasks);
  return (ctx, request) =>
    multiRoundTrip(ctx, request, routeRequest, (to, upstream, wire) => toClient(to, upstream, wire, tasks));
}

/**
 * Forwards a client notification (cancellation, roots changed, progress) to the
 * upstreams of the route. Each upstream ignores what is not its own.
 */
export async function relayNotification(ctx: CallContext, text: string): Promise<void> {
  const initialized = ctx.route.upstreams.filter(
    (upstream) => heldSession(ctx.upstreamClient, upstream.name) !== undefined,
  );
  await Promise.all(
    initialized.map(async (upstream) => {
      const reply = await sendToUpstream(upstream, text, poolRequest(ctx));
      if (!reply.ok) return;
      for await (const item of upstreamMessages(reply.value, upstream.name)) if (!item.ok) break;
    }),
  );
}

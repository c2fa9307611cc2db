/**
 * Merged lists on the aggregated endpoint (tools, prompts, resources, templates, tasks).
 *
 * One page asks every upstream that still has more for its next page, in parallel, and
 * joins the items as raw text: a tool's schemas are never re-serialised, only its
 * `name` is replaced. An upstream that fails loses only its own items; the page says
 * which in `_meta`, and the others keep their place.
 */
import { decodeCursor, encodeCursor, type MergedCursor } from "./cursor";
import { GatewayError } from "../core/errors";
import { isObject, resultText, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { qualifyName } from "../core/names";
import { redactSecrets } from "../config/secrets";
import { elements, member, parseSpan, pathSpan, rootSpan, splice, type Span } from "../core/raw-json";
import { heldSession } from "../upstream/upstream-session";
import type { OwnedTasks, RelayTasks } from "./plugs";
import type { CallContext } from "../context/call-context";
import type { UpstreamConfig } from "../config/upstreams";
import { forwardList } from "./cached-list";
import { appUriEdits, shownAppUri } from "./app-resource-uris";
import { TASKS_LIST_CAPABILITY } from "../upstream/pool";

/** Parallel upstream requests per page; Workers allow 6 open connections per request. */
const MAX_PARALLEL_UPSTREAMS = 6;
export const UNAVAILABLE_META_KEY = "mcp-edge-gateway/unavailable";
export const DROPPED_META_KEY = "mcp-edge-gateway/duplicates-dropped";
/** Resources listed by two upstreams under one URI: which one serves it, which one is hidden. */
export const URI_COLLISIONS_META_KEY = "mcp-edge-gateway/uri-collisions";

/**
 * A merged list: its method, the result member holding the items, the sealed capability
 * key of upstreams that serve it, whether item names get the `<upstream>___` prefix, and
 * whether items are tasks (only the caller's own are kept, with the ids it knows: plugs.ts).
 */
export type ListKind = {
  readonly method: string;
  readonly key: string;
  readonly capability: string;
  readonly renamed: boolean;
  readonly taskIds?: boolean;
};

/** The merged lists by method (a Map: a client's method name is never a prototype member here). */
export const LISTS: ReadonlyMap<string, ListKind> = new Map(
  [
    { method: "tools/list", key: "tools", capability: "tools", renamed: true },
    { method: "prompts/list", key: "prompts", capability: "prompts", renamed: true },
    { method: "resources/list", key: "resources", capability: "resources", renamed: false },
    { method: "resources/templates/list", key: "resourceTemplates", capability: "resources", renamed: false },
    { method: "tasks/list", key: "tasks", capability: TASKS_LIST_CAPABILITY, renamed: false, taskIds: true },
  ].map((kind) => [kind.method, kind]),
);

/** One upstream's page: item texts (renamed where needed) and its next cursor. */
type UpstreamPage = { items: { text: string; name?: string; uri?: string }[]; nextCursor: string | null };

/** Reads a list response's items as raw spans. */
export function pageItems(text: string, key: string): { items: Span[]; nextCursor: string | null } {
  const result = pathSpan(text, ["result"]);
  if (!result) throw new Error("the response has no result");
  const list = member(text, result, key);
  const cursorSpan = member(text, result, "nextCursor");
  const nextCursor = cursorSpan ? parseSpan(text, cursorSpan) : null;
  return {
    items: list ? elements(text, list) : [],
    nextCursor: typeof nextCursor === "string" && nextCursor !== "" ? nextCursor : null,
  };
}

async function upstreamPage(
  ctx: CallContext,
  upstream: UpstreamConfig,
  kind: ListKind,
  request: JsonRpcRequest,
  cursor: string | null,
  tasks: RelayTasks,
  ownTasks: OwnedTasks,
): Promise<UpstreamPage> {
  const params: Record<string, unknown> = { ...request.params };
  delete params["cursor"];
  if (cursor !== null) params["cursor"] = cursor;
  const text = JSON.stringify({
    jsonrpc: "2.0",
    id: request.id,
    method: kind.method,
    ...(Object.keys(params).length > 0 ? { params } : {}),
  });
  const sent = (await forwardList(ctx, upstream, kind.method, params, text, request.id, tasks)).text;
  // Tasks: only the caller's own, with the ids the caller knows (plugs.ts).
  const answer = kind.taskIds ? await tasks.ownList(ctx, upstream.name, sent, ownTasks) : sent;
  const root = rootSpan(answer);
  const error = member(answer, root, "error");
  if (error) {
    const detail = parseSpan(answer, error);
    throw new GatewayError(
      200,
      0,
      `upstream "${upstream.name}" answered ${kind.method} with an error: ${redactSecrets(isObject(detail) ? String(detail["message"]) : "unknown", ctx.services.env)}`,
    );
  }
  const page = pageItems(answer, kind.key);
  const items = page.items.map((span) => {
    if (answer.charCodeAt(span.start) !== 0x7b) return { text: answer.slice(span.start, span.end) };
    const nameSpan = member(answer, span, "name");
    const uriSpan = member(answer, span, "uri");
    const name = nameSpan ? parseSpan(answer, nameSpan) : undefined;
    const uri = uriSpan ? parseSpan(answer, uriSpan) : undefined;
    // MCP Apps: `ui://` URIs shown per upstream (app-resource-uris.ts), so two never hide each other.
    const apps = appUriEdits(answer, span, upstream.name, kind.method);
    const item = splice(answer.slice(span.start, span.end), apps);
    const listed = typeof uri === "string" ? { uri: shownAppUri(upstream.name, uri) } : {};
    if (!kind.renamed || typeof name !== "string" || !nameSpan) return { text: item, ...listed };
    const qualified = qualifyName(upstream.name, name);
    const local = { start: nameSpan.start - span.start, end: nameSpan.end - span.start };
    const text = splice(answer.slice(span.start, span.end), [...apps, { span: local, raw: JSON.stringify(qualified) }]);
    return { text, name: qualified };
  });
  return { items, nextCursor: page.nextCursor };
}

/** Runs `work` over `inputs` with at most `limit` in flight, keeping input order. */
async function inParallel<I, O>(
  inputs: readonly I[],
  limit: number,
  work: (input: I) => Promise<O>,
): Promise<PromiseSettledResult<O>[]> {
  const out: PromiseSettledResult<O>[] = new Array(inputs.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, inputs.length) }, async () => {
    while (next < inputs.length) {
      const index = next++;
      try {
        out[index] = { status: "fulfilled", value: await work(inputs[index]!) };
      } catch (reason) {
        out[index] = { status: "rejected", reason };
      }
    }
  });
  await Promise.all(lanes);
  return out;
}

/** Which upstreams a first page asks: those that advertised the capability, or that are not yet initialized. */
function firstPage(ctx: CallContext, kind: ListKind): MergedCursor {
  return ctx.route.upstreams
    .filter((upstream) => {
      const session = heldSession(ctx.upstreamClient, upstream.name);
      return !session || session.capabilities.includes(kind.capability);
    })
    .map((upstream) => [upstream.name, null] as const);
}

/** A cursor's upstreams that are still configured, each once: one page asks each upstream at most once. */
function pendingOf(ctx: CallContext, cursor: MergedCursor): MergedCursor {
  const seen = new Set<string>();
  return cursor.filter(([name]) => {
    if (seen.has(name) || !ctx.route.upstreams.some((u) => u.name === name)) return false;
    seen.add(name);
    return true;
  });
}

/** Answers a list request on the aggregated endpoint. `onItems` sees each upstream's items (URI routing learns from it). */
export async function mergeList(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  kind: ListKind,
  tasks: RelayTasks,
  onItems?: (upstream: string, items: UpstreamPage["items"]) => void,
): Promise<string> {
  const { id, params } = request.message;
  const binding = { secret: ctx.services.sessionSecret, sid: ctx.upstreamClient.sid, method: kind.method };
  const pending =
    params?.["cursor"] !== undefined
      ? pendingOf(ctx, await decodeCursor(params["cursor"], binding))
      : firstPage(ctx, kind);
  const ownTasks = tasks.ownedBy(ctx);
  const pages = await inParallel(pending, MAX_PARALLEL_UPSTREAMS, ([name, cursor]) =>
    upstreamPage(
      ctx,
      ctx.route.upstreams.find((u) => u.name === name)!,
      kind,
      request.message,
      cursor,
      tasks,
      ownTasks,
    ),
  );

  const items: string[] = [];
  const seen = new Set<string>();
  const dropped: string[] = [];
  // Pages are in UPSTREAMS order, so the first upstream in the configuration keeps a URI.
  const uriServers = new Map<string, string>();
  const collisions: { uri: string; servedBy: string; hidden: string }[] = [];
  const unavailable: { upstream: string; error: string }[] = [];
  const next: [string, string | null][] = [];
  pages.forEach((page, index) => {
    const upstream = pending[index]![0];
    if (page.status === "rejected") {
      const error = page.reason instanceof GatewayError ? page.reason.message : String(page.reason);
      unavailable.push({ upstream, error });
      console.warn(`mcp-edge-gateway: ${kind.method}: ${error}`);
      return;
    }
    const kept: UpstreamPage["items"] = [];
    for (const item of page.value.items) {
      if (kind.method === "resources/list" && item.uri !== undefined) {
        const servedBy = uriServers.get(item.uri);
        if (servedBy !== undefined && servedBy !== upstream) {
          collisions.push({ uri: item.uri, servedBy, hidden: upstream });
          console.warn(
            `mcp-edge-gateway: resources/list: "${upstream}" lists ${JSON.stringify(item.uri)}, which "${servedBy}" (earlier in UPSTREAMS) serves; reads go to "${servedBy}"`,
          );
          continue;
        }
        uriServers.set(item.uri, upstream);
      }
      if (item.name !== undefined) {
        if (seen.has(item.name)) {
          dropped.push(item.name);
          continue;
        }
        seen.add(item.name);
      }
      items.push(item.text);
      kept.push(item);
    }
    onItems?.(upstream, kept);
    if (page.value.nextCursor !== null) next.push([upstream, page.value.nextCursor]);
  });

  const meta: Record<string, unknown> = {};
  if (unavailable.length > 0) meta[UNAVAILABLE_META_KEY] = unavailable;
  if (dropped.length > 0) meta[DROPPED_META_KEY] = dropped;
  if (collisions.length > 0) meta[URI_COLLISIONS_META_KEY] = collisions;
  const tail =
    (next.length > 0 ? `,"nextCursor":${JSON.stringify(await encodeCursor(next, binding))}` : "") +
    (Object.keys(meta).length > 0 ? `,"_meta":${JSON.stringify(meta)}` : "");
  const head = resultText(id, {}).slice(0, -2); // `{"jsonrpc":"2.0","id":…,"result":{`
  return `${head}${JSON.stringify(kind.key)}:[${items.join(",")}]${tail}}}`;
}

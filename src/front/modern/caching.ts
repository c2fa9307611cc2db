/**
 * Caching hints of 2026-07-28 (server/utilities/caching.mdx) and the `resultType` every
 * complete result carries (basic/index), spliced into the upstream's answer so every
 * other byte stays as the upstream wrote it. `tools/list` comes in a deterministic order.
 */
import type { Identity } from "../../context/call-context";
import { isObject } from "../../core/jsonrpc";
import {
  appendMemberSplice,
  elements,
  member,
  members,
  parseSpan,
  rootSpan,
  splice,
  type Span,
  type Splice,
} from "../../core/raw-json";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { UNAVAILABLE_META_KEY } from "../../relay/merge-lists";
import { CACHEABLE_METHODS } from "./protocol";

/**
 * How long a client may keep a read or `server/discover` result: 0, "re-fetch when
 * needed". A 2025 upstream gives no freshness for a resource's content (updates are
 * announced only for URIs a listen subscribed to), and discover reflects which upstreams
 * answer right now.
 */
export const RESULT_TTL_MS = 0;

/**
 * How long a client may keep a complete list page (tools, prompts, resources,
 * templates). Upstream list changes reach a client that listens
 * (`subscriptions/listen` relays each upstream's list_changed, which invalidates the
 * cache at once, as server/utilities/caching says); the gateway's own documents
 * (personas, visibility, overrides, filters) reach lists within the same time, the
 * document cache of an isolate (`FILTER_CACHE_TTL_MS`, default 30 s). A merged list
 * that lacks an unavailable upstream gets 0: it should not outlive the outage.
 */
export const LIST_TTL_MS = DEFAULT_DOCUMENT_CACHE_TTL_MS;

const LIST_METHODS: ReadonlySet<string> = new Set([
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
]);

/**
 * `private` whenever the answer may depend on who asks: any authenticated principal.
 * Only the anonymous caller of a gateway without authentication shares answers.
 *
 * @example
 * cachingHints({ authMethod: "none", ... }); // { ttlMs: 0, cacheScope: "public" }
 */
export function cachingHints(
  identity: Pick<Identity, "authMethod">,
  ttlMs = RESULT_TTL_MS,
): { ttlMs: number; cacheScope: "public" | "private" } {
  return { ttlMs, cacheScope: identity.authMethod === "none" ? "public" : "private" };
}

/** The freshness a result of `method` may promise: a complete list keeps LIST_TTL_MS, anything else 0. */
function ttlFor(text: string, result: Span, method: string): number {
  if (!LIST_METHODS.has(method)) return RESULT_TTL_MS;
  const meta = member(text, result, "_meta");
  const incomplete =
    meta !== undefined &&
    text.charCodeAt(meta.start) === 0x7b &&
    member(text, meta, UNAVAILABLE_META_KEY) !== undefined;
  return incomplete ? RESULT_TTL_MS : LIST_TTL_MS;
}

function toolName(text: string, span: Span): string {
  const tool = parseSpan(text, span);
  return isObject(tool) && typeof tool["name"] === "string" ? tool["name"] : "";
}

/** Sorts the `tools` array by name, moving each tool's bytes whole. */
function sortedToolsSplice(text: string, result: Span): Splice | undefined {
  const tools = member(text, result, "tools");
  if (!tools || text.charCodeAt(tools.start) !== 0x5b) return undefined;
  const items = elements(text, tools).map((span) => ({ span, name: toolName(text, span) }));
  const sorted = [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (sorted.every((item, index) => item === items[index])) return undefined;
  return { span: tools, raw: `[${sorted.map((item) => text.slice(item.span.start, item.span.end)).join(",")}]` };
}

/** The member a final result without a `resultType` gets (written into an unread answer's bytes too: endpoint.ts). */
export const COMPLETE_MEMBER = '"resultType":"complete"';

/**
 * The response text a modern client gets for `method`: a complete result gains
 * `resultType`, a cacheable one `ttlMs` and `cacheScope` (unless the upstream set them;
 * never on an input_required result nor on the result of a multi-round-trip retry,
 * `retried`), tools/list is sorted by name. Errors pass unchanged. `result` is the span
 * of the answer's result when the caller has read the answer's members already.
 *
 * @example
 * completeResult('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}', "tools/list", identity);
 */
export function completeResult(
  text: string,
  method: string,
  identity: Pick<Identity, "authMethod">,
  retried = false,
  result: Span | undefined = member(text, rootSpan(text), "result"),
): string {
  if (!result || text.charCodeAt(result.start) !== 0x7b) return text;
  const own = members(text, result);
  const keys = new Set(own.map((m) => m.key));
  const edits: Splice[] = [];
  if (method === "tools/list") {
    const sort = sortedToolsSplice(text, result);
    if (sort) edits.push(sort);
  }
  const added: string[] = [];
  if (!keys.has("resultType")) added.push(COMPLETE_MEMBER);
  // Interim (input_required) results carry no hints, and a retry's result depends on inputs outside the cache key (server/utilities/caching).
  const resultType = own.find((m) => m.key === "resultType");
  const interim = resultType !== undefined && parseSpan(text, resultType.value) !== "complete";
  if (CACHEABLE_METHODS.has(method) && !interim && !retried) {
    const hints = cachingHints(identity, ttlFor(text, result, method));
    // An upstream's own hints may only narrow the gateway's: the answer was shaped for this caller.
    for (const { key, value } of own) {
      const upstreamValue = parseSpan(text, value);
      if (key === "cacheScope" && hints.cacheScope === "private" && upstreamValue !== "private")
        edits.push({ span: value, raw: '"private"' });
      if (key === "ttlMs" && !(typeof upstreamValue === "number" && upstreamValue <= hints.ttlMs))
        edits.push({ span: value, raw: String(hints.ttlMs) });
    }
    if (!keys.has("ttlMs")) added.push(`"ttlMs":${hints.ttlMs}`);
    if (!keys.has("cacheScope")) added.push(`"cacheScope":${JSON.stringify(hints.cacheScope)}`);
  }
  if (added.length > 0) {
    const first = added[0]!;
    const colon = first.indexOf(":");
    const append = appendMemberSplice(
      text,
      result,
      JSON.parse(first.slice(0, colon)) as string,
      first.slice(colon + 1),
    );
    edits.push({ span: append.span, raw: [append.raw, ...added.slice(1)].join(",") });
  }
  return edits.length > 0 ? splice(text, edits) : text;
}

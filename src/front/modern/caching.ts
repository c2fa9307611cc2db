/**
 * Caching hints of 2026-07-28 (server/utilities/caching.mdx) and the `resultType` every
 * complete result carries (basic/index), spliced into the upstream's answer so every
 * other byte stays as the upstream wrote it. `tools/list` comes in a deterministic order.
 */
import type { Identity } from "../../context/call-context";
import { isObject } from "../../core/jsonrpc";
import { appendMemberSplice, elements, member, members, parseSpan, rootSpan, splice, type Span, type Splice } from "../../core/raw-json";
import { CACHEABLE_METHODS } from "./protocol";

/**
 * How long a client may keep a list or read result. The gateway cannot know when an
 * upstream's lists change and does not yet relay list-changed notifications to modern
 * clients (no `subscriptions/listen`), so it promises no freshness: 0, "re-fetch when needed".
 */
export const RESULT_TTL_MS = 0;

/**
 * `private` whenever the answer may depend on who asks: any authenticated principal.
 * Only the anonymous caller of a gateway without authentication shares answers.
 *
 * @example
 * cachingHints({ authMethod: "none", ... }); // { ttlMs: 0, cacheScope: "public" }
 */
export function cachingHints(identity: Pick<Identity, "authMethod">): { ttlMs: number; cacheScope: "public" | "private" } {
  return { ttlMs: RESULT_TTL_MS, cacheScope: identity.authMethod === "none" ? "public" : "private" };
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

/**
 * The response text a modern client gets for `method`: a complete result gains
 * `resultType`, a cacheable one `ttlMs` and `cacheScope` (unless the upstream set them),
 * tools/list is sorted by name. Errors pass unchanged.
 *
 * @example
 * completeResult('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}', "tools/list", identity);
 */
export function completeResult(text: string, method: string, identity: Pick<Identity, "authMethod">): string {
  const result = member(text, rootSpan(text), "result");
  if (!result || text.charCodeAt(result.start) !== 0x7b) return text;
  const own = members(text, result);
  const keys = new Set(own.map((m) => m.key));
  const edits: Splice[] = [];
  if (method === "tools/list") {
    const sort = sortedToolsSplice(text, result);
    if (sort) edits.push(sort);
  }
  const added: string[] = [];
  if (!keys.has("resultType")) added.push('"resultType":"complete"');
  if (CACHEABLE_METHODS.has(method)) {
    const hints = cachingHints(identity);
    // An upstream's own hints may only narrow the gateway's: the answer was shaped for this caller.
    for (const { key, value } of own) {
      const upstreamValue = parseSpan(text, value);
      if (key === "cacheScope" && hints.cacheScope === "private" && upstreamValue !== "private") edits.push({ span: value, raw: '"private"' });
      if (key === "ttlMs" && !(typeof upstreamValue === "number" && upstreamValue <= hints.ttlMs)) edits.push({ span: value, raw: String(hints.ttlMs) });
    }
    if (!keys.has("ttlMs")) added.push(`"ttlMs":${hints.ttlMs}`);
    if (!keys.has("cacheScope")) added.push(`"cacheScope":${JSON.stringify(hints.cacheScope)}`);
  }
  if (added.length > 0) {
    const first = added[0]!;
    const colon = first.indexOf(":");
    const append = appendMemberSplice(text, result, JSON.parse(first.slice(0, colon)) as string, first.slice(colon + 1));
    edits.push({ span: append.span, raw: [append.raw, ...added.slice(1)].join(",") });
  }
  return edits.length > 0 ? splice(text, edits) : text;
}

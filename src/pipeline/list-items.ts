/**
 * The entries of a list answer (tools, prompts, resources, resource templates) as raw
 * spans, each with what policy matches it by, so shaping layers (icons, text overrides)
 * splice only the members they change and every other byte of the list stays as the
 * upstream sent it.
 */
import {
  elements,
  member,
  members,
  parseSpan,
  pathSpan,
  type Span,
  type Splice,
  appendMemberSplice,
} from "../core/raw-json";
import { SYS_PREFIX } from "../core/names";
import { toolKey } from "../context/call-context";
import type { Route, RouteEndpoint } from "../context/route";

/** What a list holds. */
export type ListedKind = "tool" | "prompt" | "resource" | "resourceTemplate";

/** The lists shaping layers look at: method → the result member and the kind of entry. */
export const SHAPED_LISTS: ReadonlyMap<string, { readonly key: string; readonly kind: ListedKind }> = new Map([
  ["tools/list", { key: "tools", kind: "tool" }],
  ["prompts/list", { key: "prompts", kind: "prompt" }],
  ["resources/list", { key: "resources", kind: "resource" }],
  ["resources/templates/list", { key: "resourceTemplates", kind: "resourceTemplate" }],
]);

/** One entry of a list. */
export type ListedEntry = {
  readonly kind: ListedKind;
  /** The entry object's span. */
  readonly span: Span;
  /** Tools and prompts: `<upstream>___<name>` on either route; resources: their name. */
  readonly key?: string;
  /** The upstream a tool or prompt belongs to. */
  readonly upstream?: string;
  /** Resources: `uri`; templates: `uriTemplate`. */
  readonly uri?: string;
  /** The entry's own name, as listed. */
  readonly name?: string;
};

function stringAt(text: string, span: Span, key: string): string | undefined {
  const value = member(text, span, key);
  const parsed = value ? parseSpan(text, value) : undefined;
  return typeof parsed === "string" ? parsed : undefined;
}

/**
 * The entries of `text`, the answer to `method`; empty for any other answer (an error, a
 * method that lists nothing). The gateway's own `sys___` tools are left out.
 *
 * @example
 * for (const entry of listedEntries(ctx.route, "tools/list", text)) console.log(entry.key);
 */
export function listedEntries(
  route: RouteEndpoint & Pick<Route, "upstreams">,
  method: string,
  text: string,
): ListedEntry[] {
  const list = SHAPED_LISTS.get(method);
  const span = list && pathSpan(text, ["result", list.key]);
  if (!list || !span || text.charCodeAt(span.start) !== 0x5b) return [];
  const out: ListedEntry[] = [];
  for (const item of elements(text, span)) {
    if (text.charCodeAt(item.start) !== 0x7b) continue;
    const name = stringAt(text, item, "name");
    if (list.kind === "tool" || list.kind === "prompt") {
      const key = name === undefined ? undefined : toolKey(route, name);
      if (!key || key.key.startsWith(SYS_PREFIX)) continue;
      out.push({ kind: list.kind, span: item, key: key.key, upstream: key.upstream, name });
    } else {
      const uri = stringAt(text, item, list.kind === "resource" ? "uri" : "uriTemplate");
      out.push({
        kind: list.kind,
        span: item,
        ...(name !== undefined ? { key: name, name } : {}),
        ...(uri !== undefined ? { uri } : {}),
      });
    }
  }
  return out;
}

/** The splice that sets member `key` of the object at `span` to `raw`: replaced where present, else appended. */
export function setMemberSplice(text: string, span: Span, key: string, raw: string): Splice {
  const existing = members(text, span).findLast((m) => m.key === key); // the member JSON.parse reads
  return existing ? { span: existing.value, raw } : appendMemberSplice(text, span, key, raw);
}

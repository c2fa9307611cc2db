/**
 * MCP Apps behind one name space: a tool's `_meta.ui.resourceUri` (and the older
 * `_meta["ui/resourceUri"]`) names a `ui://` resource of its own upstream, and two upstreams
 * may well both serve `ui://widget/app.html`. On a route serving several upstreams (/mcp,
 * named servers) every `ui://` URI an upstream lists is shown as `ui://<upstream>___<rest>`
 * (the names' own separator: an upstream name never holds `___`), and a read of that URI goes
 * to that upstream under the URI it listed, its answer's URIs shown the same way. On
 * /mcp/<upstream> nothing changes. Edits are splices of the upstream's bytes: nothing else in
 * an item or an answer is re-encoded. This module is the one place the mapping is written.
 */
import { elements, member, pathSpan, rootSpan, splice, type Span, type Splice } from "../core/raw-json";

const UI_SCHEME = "ui://";
const SEPARATOR = "___";

/**
 * The URI a client of a shared route is shown for `upstream`'s `uri` (unchanged unless `ui://`).
 *
 * @example
 * shownAppUri("alpha", "ui://board/app.html"); // "ui://alpha___board/app.html"
 */
export function shownAppUri(upstream: string, uri: string): string {
  return uri.startsWith(UI_SCHEME) ? `${UI_SCHEME}${upstream}${SEPARATOR}${uri.slice(UI_SCHEME.length)}` : uri;
}

/**
 * The upstream and its own URI behind a shown `ui://` URI, or undefined for any other URI.
 *
 * @example
 * appUriTarget("ui://alpha___board/app.html"); // { upstream: "alpha", uri: "ui://board/app.html" }
 */
export function appUriTarget(uri: string): { upstream: string; uri: string } | undefined {
  if (!uri.startsWith(UI_SCHEME)) return undefined;
  const at = uri.indexOf(SEPARATOR, UI_SCHEME.length);
  if (at <= UI_SCHEME.length) return undefined;
  return { upstream: uri.slice(UI_SCHEME.length, at), uri: UI_SCHEME + uri.slice(at + SEPARATOR.length) };
}

/** A splice showing the `ui://` string at `span` of `text` for `upstream`, if it is one. */
function shown(text: string, span: Span | undefined, upstream: string, base = 0): Splice[] {
  if (!span || text.charCodeAt(span.start) !== 0x22) return [];
  const value: unknown = JSON.parse(text.slice(span.start, span.end));
  if (typeof value !== "string" || !value.startsWith(UI_SCHEME)) return [];
  const at = { start: span.start - base, end: span.end - base };
  return [{ span: at, raw: JSON.stringify(shownAppUri(upstream, value)) }];
}

/**
 * The edits showing the app URIs of one listed item (`span` of `text`, a tool or a resource)
 * for `upstream`, relative to the item's start.
 */
export function appUriEdits(text: string, span: Span, upstream: string, method: string): Splice[] {
  if (method === "resources/list") return shown(text, member(text, span, "uri"), upstream, span.start);
  if (method !== "tools/list") return [];
  const meta = member(text, span, "_meta");
  if (!meta || text.charCodeAt(meta.start) !== 0x7b) return [];
  const ui = member(text, meta, "ui");
  const nested = ui && text.charCodeAt(ui.start) === 0x7b ? member(text, ui, "resourceUri") : undefined;
  return [
    ...shown(text, nested, upstream, span.start),
    ...shown(text, member(text, meta, "ui/resourceUri"), upstream, span.start),
  ];
}

/** A `resources/read` answer of `upstream` with its contents' URIs shown as on the shared route. */
export function shownReadAnswer(answer: string, upstream: string): string {
  const contents = pathSpan(answer, ["result", "contents"], rootSpan(answer));
  if (!contents || answer.charCodeAt(contents.start) !== 0x5b) return answer;
  const edits = elements(answer, contents).flatMap((item) =>
    answer.charCodeAt(item.start) === 0x7b ? shown(answer, member(answer, item, "uri"), upstream) : [],
  );
  return edits.length === 0 ? answer : splice(answer, edits);
}

/**
 * Trimming a list inside a JSON-RPC answer's raw text: the items kept keep their bytes
 * (schemas are never re-serialised), only the items dropped and their separators go.
 */
import { elements, member, parseSpan, pathSpan, splice, type Span } from "./raw-json";

/**
 * The answer with only the items of `result.<key>` whose `name` satisfies `keep`; the
 * text unchanged when there is no such list or nothing is dropped. Items without a
 * string name are kept or dropped as `keep(undefined, ...)` says.
 *
 * @example
 * keepListed('{"result":{"tools":[{"name":"a"},{"name":"b"}]}}', "tools", (name) => name === "b")
 * // '{"result":{"tools":[{"name":"b"}]}}'
 */
export function keepListed(text: string, key: string, keep: (name: string | undefined, item: Span) => boolean): string {
  const list = pathSpan(text, ["result", key]);
  if (!list || text.charCodeAt(list.start) !== 0x5b) return text;
  const items = elements(text, list);
  const kept = items.filter((item) => {
    const nameSpan = text.charCodeAt(item.start) === 0x7b ? member(text, item, "name") : undefined;
    const name = nameSpan ? parseSpan(text, nameSpan) : undefined;
    return keep(typeof name === "string" ? name : undefined, item);
  });
  if (kept.length === items.length) return text;
  return splice(text, [{ span: list, raw: `[${kept.map((item) => text.slice(item.start, item.end)).join(",")}]` }]);
}

/**
 * The answer with `items` appended to the list at `result.<key>` (their JSON written
 * after the items already there); the text unchanged when there is no such list.
 *
 * @example
 * appendListed('{"result":{"tools":[{"name":"a"}]}}', "tools", { name: "b" })
 * // '{"result":{"tools":[{"name":"a"},{"name":"b"}]}}'
 */
export function appendListed(text: string, key: string, ...items: readonly unknown[]): string {
  const list = pathSpan(text, ["result", key]);
  if (!list || text.charCodeAt(list.start) !== 0x5b || items.length === 0) return text;
  const at = list.end - 1;
  const raw = items.map((item) => JSON.stringify(item)).join(",");
  return splice(text, [{ span: { start: at, end: at }, raw: `${elements(text, list).length > 0 ? "," : ""}${raw}` }]);
}

/**
 * List entries that two parsers read differently. An entry whose object names one key
 * twice (`{"name":"fresh_tool",…,"name":"echo"}`) is a different tool to a reader that
 * takes the first member and to one that takes the last (JSON.parse, and so most
 * clients): the gateway would pin, prefix and route one name while the client sees
 * another (on `/mcp`, another upstream's `bank___transfer`). No reading of such an entry
 * is safe, so it is left out of the list every client gets, with a log line, and handed
 * to pinning (the call record) to be reported as a finding. Linear in the answer: each
 * entry's top-level members are read once, their values skipped.
 */
import { elements, members, pathSpan, splice, type Span } from "../core/raw-json";
import type { AmbiguousEntry } from "../context/call-record";

/** The lists whose entries are checked: method → the result member holding them. */
const ENTRY_LISTS: ReadonlyMap<string, string> = new Map([
  ["tools/list", "tools"],
  ["prompts/list", "prompts"],
  ["resources/list", "resources"],
  ["resources/templates/list", "resourceTemplates"],
]);

/** Characters of a duplicated key quoted in a log line. */
const MAX_LOGGED_KEY_CHARS = 64;

/** The first key the object at `span` names twice, or undefined. */
function duplicateKey(text: string, span: Span): string | undefined {
  const seen = new Set<string>();
  for (const { key } of members(text, span)) {
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return undefined;
}

/**
 * `answer` (to `method`, from `upstream`) without its list entries that name a member
 * twice, and those entries; the answer unchanged when there are none.
 *
 * @example
 * withoutAmbiguousEntries("evil", "tools/list", '{"result":{"tools":[{"name":"x","name":"y"}]}}');
 * // { text: '{"result":{"tools":[]}}', dropped: [{ upstream: "evil", method: "tools/list", key: "name", raw: … }] }
 */
/** True for the methods whose answers list entries (the only answers `withoutAmbiguousEntries` reads). */
export function listsEntries(method: string): boolean {
  return ENTRY_LISTS.has(method);
}

export function withoutAmbiguousEntries(
  upstream: string,
  method: string,
  answer: string,
): { text: string; dropped: AmbiguousEntry[] } {
  const key = ENTRY_LISTS.get(method);
  const list = key === undefined ? undefined : pathSpan(answer, ["result", key]);
  if (!list || answer.charCodeAt(list.start) !== 0x5b) return { text: answer, dropped: [] };
  const kept: Span[] = [];
  const dropped: AmbiguousEntry[] = [];
  for (const item of elements(answer, list)) {
    const twice = answer.charCodeAt(item.start) === 0x7b ? duplicateKey(answer, item) : undefined;
    if (twice === undefined) {
      kept.push(item);
      continue;
    }
    dropped.push({ upstream, method, key: twice, raw: answer.slice(item.start, item.end) });
    const shown = twice.length > MAX_LOGGED_KEY_CHARS ? `${twice.slice(0, MAX_LOGGED_KEY_CHARS)}…` : twice;
    const quoted = JSON.stringify(shown);
    console.warn(
      `mcp-edge-gateway: ${method}: "${upstream}" listed an entry naming the member ${quoted} twice ` +
        "(clients and the gateway would read it differently); it is not served",
    );
  }
  if (dropped.length === 0) return { text: answer, dropped };
  const raw = `[${kept.map((item) => answer.slice(item.start, item.end)).join(",")}]`;
  return { text: splice(answer, [{ span: list, raw }]), dropped };
}

/**
 * What changed between two versions of a definition, for people: the members that
 * differ (what an audit event names) and a list of changes at JSON Pointer granularity
 * (what GET /admin/pins shows beside a pending change), bounded in count and size.
 */
import { canonicalJson } from "../../core/canonical-json";
import { isObject, type JsonObject } from "../../core/jsonrpc";
import { isPinnedMember, type PinKind } from "./pin-definition";

/** Changes listed per pending definition; the rest are counted. */
const MAX_DIFF_ENTRIES = 50;
/** Characters of a value shown in one change. */
const MAX_VALUE_CHARS = 2_000;
/** How deep the diff descends before it reports a whole subtree as changed. */
const MAX_DIFF_DEPTH = 12;

/** One change: where, and the values before and after (absent: added or removed). */
export type DiffEntry = {
  readonly path: string;
  readonly change: "added" | "removed" | "changed";
  readonly before?: unknown;
  readonly after?: unknown;
};

/** The pinned members of either definition, in the order they first appear. */
function pinnedMembers(before: JsonObject, after: JsonObject): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(isPinnedMember);
}

/** The fingerprinted members that differ between two definitions (every kind pins all its members). */
export function changedMembers(_kind: PinKind, before: JsonObject, after: JsonObject): string[] {
  return pinnedMembers(before, after).filter(
    (key) =>
      canonicalJson(before[key] ?? null) !== canonicalJson(after[key] ?? null) ||
      Object.hasOwn(before, key) !== Object.hasOwn(after, key),
  );
}

function shown(value: unknown): unknown {
  if (typeof value === "string") return value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}…` : value;
  if (value === null || typeof value !== "object") return value;
  const text = canonicalJson(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : value;
}

function token(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function walk(
  before: unknown,
  after: unknown,
  path: string,
  depth: number,
  out: DiffEntry[],
  counted: { more: number },
): void {
  if (canonicalJson(before) === canonicalJson(after)) return;
  const push = (entry: DiffEntry) => (out.length < MAX_DIFF_ENTRIES ? out.push(entry) : counted.more++);
  if (depth < MAX_DIFF_DEPTH && isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) {
      const at = `${path}/${token(key)}`;
      if (!Object.hasOwn(after, key)) push({ path: at, change: "removed", before: shown(before[key]) });
      else if (!Object.hasOwn(before, key)) push({ path: at, change: "added", after: shown(after[key]) });
      else walk(before[key], after[key], at, depth + 1, out, counted);
    }
    return;
  }
  push({ path: path || "/", change: "changed", before: shown(before), after: shown(after) });
}

/**
 * The changes from `before` to `after` over the fingerprinted members.
 *
 * @example
 * definitionDiff("tool", { description: "Adds" }, { description: "Adds. <IMPORTANT>…" });
 * // { changes: [{ path: "/description", change: "changed", before: "Adds", after: "Adds. <IMPORTANT>…" }], more: 0 }
 */
export function definitionDiff(
  _kind: PinKind,
  before: JsonObject,
  after: JsonObject,
): { changes: DiffEntry[]; more: number } {
  const out: DiffEntry[] = [];
  const counted = { more: 0 };
  const pick = (definition: JsonObject) =>
    Object.fromEntries(
      Object.keys(definition)
        .filter(isPinnedMember)
        .map((key) => [key, definition[key]]),
    );
  walk(pick(before), pick(after), "", 0, out, counted);
  return { changes: out, more: counted.more };
}

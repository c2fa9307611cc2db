/**
 * Tool visibility: which tools `tools/list` shows, to keep lists (and the tokens a model
 * spends reading them) small. The reference semantics (MCPToolVisibilityMiddleware): no
 * patterns, everything is visible; allow only, only matches; deny only, all but matches;
 * both, allow first and then deny removes from that set. Like a persona's, a deny holds
 * for every spelling an upstream may resolve to the same name (`core/glob.ts`), allow
 * stays exact. It trims lists and is not a security boundary: personas gate calls on
 * their own.
 *
 *   {"allow": ["github___*"], "deny": ["*___delete_*"]}
 */
import { isObject } from "../../core/jsonrpc";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { deniesLoosely, matchesGlob } from "../../core/glob";

const PATTERN = /^[A-Za-z0-9_*?.:/-]{1,256}$/;
const MAX_PATTERNS = 256;

export type Visibility = { readonly allow: readonly string[]; readonly deny: readonly string[] };

/** Checks a visibility document. */
export function checkVisibility(value: unknown): Checked<Visibility> {
  if (!isObject(value))
    return { ok: false, problems: [{ path: "", message: '{"allow"?: [patterns], "deny"?: [patterns]}' }] };
  const problems: DocumentProblem[] = [];
  for (const key of Object.keys(value))
    if (key !== "allow" && key !== "deny")
      problems.push({ path: `/${key}`, message: "not a field of visibility (allow, deny)" });
  const list = (key: "allow" | "deny"): string[] => {
    const items = value[key];
    if (items === undefined) return [];
    if (!Array.isArray(items) || items.length > MAX_PATTERNS) {
      problems.push({ path: `/${key}`, message: `a list of up to ${MAX_PATTERNS} patterns` });
      return [];
    }
    items.forEach((item, index) => {
      if (typeof item !== "string" || !PATTERN.test(item))
        problems.push({
          path: `/${key}/${index}`,
          message: "a pattern: letters, digits, _ - . : / and the wildcards * ?",
        });
    });
    return items.filter((item): item is string => typeof item === "string");
  };
  const checked = { allow: list("allow"), deny: list("deny") };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: checked };
}

/**
 * True when `key` is listed under `visibility`.
 *
 * @example
 * isVisible({ allow: ["gh___*"], deny: ["gh___delete_*"] }, "gh___delete_repo") // false
 */
export function isVisible(visibility: Visibility, key: string): boolean {
  if (visibility.allow.length > 0 && !visibility.allow.some((glob) => matchesGlob(glob, key))) return false;
  return !visibility.deny.some((glob) => deniesLoosely(glob, key));
}

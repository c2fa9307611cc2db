/**
 * The text overrides document (KV key `shaping/overrides`): a new `title` and/or
 * `description` per tool and per prompt (by its `<upstream>___<name>` key, the same on
 * /mcp and /mcp/<upstream>), and an `instructions` text per upstream. Only these fields
 * are ever changed; schemas and everything else keep their bytes. An `alias` renames a
 * tool or prompt on /mcp (features/named-servers/serve.ts applies it; the original name
 * still calls it): it has no `___`, so it is never another tool's `<upstream>___<name>`.
 *
 * ```yaml
 * tools:
 *   alpha___echo: { alias: "echo", title: "Echo", description: "Repeats the text it is given." }
 * prompts:
 *   beta___haiku: { description: "A haiku about anything." }
 * upstreams:
 *   alpha: { instructions: "Use alpha for arithmetic." }
 * ```
 */
import { isObject } from "../../core/jsonrpc";
import { deepFreeze } from "../../storage/document-limits";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { at, checkText, rootProblem, unknownFields } from "../../storage/document-checks";

/** New texts for one tool or prompt, and the name /mcp lists it by. */
export type TextOverride = { readonly title?: string; readonly description?: string; readonly alias?: string };

/** An alias: a tool name clients accept (`^[a-zA-Z0-9_-]{1,64}$`), without the `___` of aggregated names. */
const ALIAS = /^[A-Za-z0-9_-]{1,64}$/;

/** True when `value` is an alias; reports it at `path` otherwise. */
export function checkAlias(value: unknown, path: string, problems: DocumentProblem[]): value is string {
  if (typeof value === "string" && ALIAS.test(value) && !value.includes("___")) return true;
  problems.push({ path, message: "must be 1-64 letters, digits, '_' or '-', without '___'" });
  return false;
}

export type OverridesDocument = {
  readonly tools: Readonly<Record<string, TextOverride>>;
  readonly prompts: Readonly<Record<string, TextOverride>>;
  readonly upstreams: Readonly<Record<string, { readonly instructions?: string }>>;
};

function checkTable(
  value: unknown,
  path: string,
  fields: readonly string[],
  problems: DocumentProblem[],
): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = Object.create(null) as Record<string, Record<string, string>>;
  if (value === undefined) return out;
  if (!isObject(value)) {
    problems.push({ path, message: `must be an object of {${fields.join(", ")}} by name` });
    return out;
  }
  const aliases = new Set<string>();
  for (const [name, entry] of Object.entries(value)) {
    const where = at(path, name);
    if (!isObject(entry)) {
      problems.push({ path: where, message: `must be an object with ${fields.join(" and/or ")}` });
      continue;
    }
    unknownFields(entry, fields, where, problems);
    const texts: Record<string, string> = {};
    for (const field of fields) {
      const given = entry[field];
      if (given === undefined) continue;
      if (
        field !== "alias" ? checkText(given, at(where, field), problems) : checkAlias(given, at(where, field), problems)
      )
        texts[field] = given as string;
    }
    if (texts["alias"] !== undefined && aliases.has(texts["alias"]))
      problems.push({ path: at(where, "alias"), message: `"${texts["alias"]}" names two entries` });
    if (texts["alias"] !== undefined) aliases.add(texts["alias"]);
    out[name] = texts;
  }
  return out;
}

/**
 * Validates an overrides document.
 *
 * @example
 * checkOverrides({ tools: { alpha___echo: { title: "Echo" } } }); // { ok: true, value: ... }
 */
export function checkOverrides(value: unknown): Checked<OverridesDocument> {
  const root = rootProblem(value, "{tools?, prompts?, upstreams?}");
  if (root || !isObject(value)) return { ok: false, problems: [root!] };
  const problems: DocumentProblem[] = [];
  unknownFields(value, ["tools", "prompts", "upstreams"], "", problems);
  const document = {
    tools: checkTable(value["tools"], "/tools", ["title", "description", "alias"], problems),
    prompts: checkTable(value["prompts"], "/prompts", ["title", "description", "alias"], problems),
    upstreams: checkTable(value["upstreams"], "/upstreams", ["instructions"], problems),
  };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: deepFreeze(document) };
}

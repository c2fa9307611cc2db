/**
 * The text overrides document (KV key `shaping/overrides`): a new `title` and/or
 * `description` per tool and per prompt (by its `<upstream>___<name>` key, the same on
 * /mcp and /mcp/<upstream>), and an `instructions` text per upstream. Only these fields
 * are ever changed; schemas and everything else keep their bytes.
 *
 * ```yaml
 * tools:
 *   alpha___echo: { title: "Echo", description: "Repeats the text it is given." }
 * prompts:
 *   beta___haiku: { description: "A haiku about anything." }
 * upstreams:
 *   alpha: { instructions: "Use alpha for arithmetic." }
 * ```
 */
import { isObject } from "../../core/jsonrpc";
import { deepFreeze } from "../../policy/document-limits";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { at, checkText, rootProblem, unknownFields } from "../../policy/document-checks";

/** New texts for one tool or prompt. */
export type TextOverride = { readonly title?: string; readonly description?: string };

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
  for (const [name, entry] of Object.entries(value)) {
    const where = at(path, name);
    if (!isObject(entry)) {
      problems.push({ path: where, message: `must be an object with ${fields.join(" and/or ")}` });
      continue;
    }
    unknownFields(entry, fields, where, problems);
    const texts: Record<string, string> = {};
    for (const field of fields)
      if (entry[field] !== undefined && checkText(entry[field], at(where, field), problems))
        texts[field] = entry[field] as string;
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
    tools: checkTable(value["tools"], "/tools", ["title", "description"], problems),
    prompts: checkTable(value["prompts"], "/prompts", ["title", "description"], problems),
    upstreams: checkTable(value["upstreams"], "/upstreams", ["instructions"], problems),
  };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: deepFreeze(document) };
}

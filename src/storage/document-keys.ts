/**
 * The KV keys of the live-edited documents (filter sets, the plan, personas, visibility,
 * icons, overrides, rules), each one validated JSON document read through
 * document-store.ts. The only module that names them; operators write them with
 * `wrangler kv key put` too, so they never change.
 */

/** The filter plan: which set applies to which route or upstream. */
export const PLAN_KEY = "plan";
/** Personas: name to persona, one document. */
export const PERSONAS_KEY = "personas";
/** Which tools `tools/list` shows. */
export const VISIBILITY_KEY = "visibility";
/** Icons of tools, prompts and resources. */
export const ICONS_KEY = "shaping/icons";
/** New texts for tools and prompts. */
export const OVERRIDES_KEY = "shaping/overrides";
/** Rules: hints and conditions per tool. */
export const RULES_KEY = "shaping/rules";

const FILTER_SET_KEY_PREFIX = "filter-sets/";

/** The key of the filter set named `name`. */
export function filterSetKey(name: string): string {
  return FILTER_SET_KEY_PREFIX + name;
}

/** The names of every stored filter set, one KV list a page. */
export async function listFilterSetNames(kv: KVNamespace): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown, string> = await kv.list({
      prefix: FILTER_SET_KEY_PREFIX,
      ...(cursor ? { cursor } : {}),
    });
    names.push(...page.keys.map((key) => key.name.slice(FILTER_SET_KEY_PREFIX.length)));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return names;
}

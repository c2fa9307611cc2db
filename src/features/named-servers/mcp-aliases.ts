/**
 * Aliases on /mcp: the `alias` of a tool or prompt in the text overrides document
 * (features/shaping/overrides-document.ts), served by the named servers' layer as a server's
 * aliases are, except that nothing else is dropped and the original name still calls it.
 * Compiled once per document version into the same lookups a named server uses.
 */
import { OVERRIDES_KEY } from "../../storage/document-keys";
import { loadDocument } from "../../storage/document-store";
import { checkOverrides, type OverridesDocument, type TextOverride } from "../shaping/overrides-document";
import type { Pick } from "./document";
import type { NamePicks } from "./picks";

/** The aliased tools and prompts of the overrides document. */
export type McpAliases = { readonly tools: NamePicks; readonly prompts: NamePicks };

const compiled = new WeakMap<OverridesDocument, McpAliases | null>();

function aliasPicks(table: Readonly<Record<string, TextOverride>>): { picks: NamePicks; any: boolean } {
  const byKey = new Map<string, Pick>();
  const byAlias = new Map<string, Pick>();
  for (const [key, override] of Object.entries(table)) {
    if (override.alias === undefined) continue;
    const pick = { pick: key, alias: override.alias };
    byKey.set(key, pick);
    byAlias.set(override.alias, pick);
  }
  return { picks: { of: (key) => byKey.get(key), byAlias: (alias) => byAlias.get(alias) }, any: byKey.size > 0 };
}

/** The aliases /mcp serves now; undefined when the overrides document gives none (or is absent or broken). */
export async function mcpAliases(kv: KVNamespace | undefined, ttlMs: number): Promise<McpAliases | undefined> {
  if (!kv) return undefined;
  const stored = await loadDocument(kv, OVERRIDES_KEY, ttlMs, checkOverrides);
  if (stored.state !== "valid") return undefined;
  let made = compiled.get(stored.value);
  if (made === undefined) {
    const tools = aliasPicks(stored.value.tools);
    const prompts = aliasPicks(stored.value.prompts);
    made = tools.any || prompts.any ? { tools: tools.picks, prompts: prompts.picks } : null;
    compiled.set(stored.value, made);
  }
  return made ?? undefined;
}

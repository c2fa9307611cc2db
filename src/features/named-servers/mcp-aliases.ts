/**
 * Aliases on /mcp: the `alias` of a tool or prompt in the text overrides document
 * (features/shaping/overrides-document.ts), served by the named servers' layer as a server's
 * aliases are, except that nothing else is dropped and the original name still calls it.
 * Compiled once per document version into the same lookups a named server uses (serve.ts
 * loads this only when the document holds an alias).
 */
import type { OverridesDocument, TextOverride } from "../shaping/overrides-document";
import type { Pick } from "./document";
import type { NamePicks } from "./picks";

/** The aliased tools and prompts of the overrides document. */
export type McpAliases = { readonly tools: NamePicks; readonly prompts: NamePicks };

const compiled = new WeakMap<OverridesDocument, McpAliases>();

function aliasPicks(table: Readonly<Record<string, TextOverride>>): NamePicks {
  const byKey = new Map<string, Pick>();
  const byAlias = new Map<string, Pick>();
  for (const [key, override] of Object.entries(table)) {
    if (override.alias === undefined) continue;
    const pick = { pick: key, alias: override.alias };
    byKey.set(key, pick);
    byAlias.set(override.alias, pick);
  }
  return { of: (key) => byKey.get(key), byAlias: (alias) => byAlias.get(alias) };
}

/** The aliases of `overrides`, compiled once per document version. */
export function mcpAliases(overrides: OverridesDocument): McpAliases {
  let made = compiled.get(overrides);
  if (made === undefined) {
    made = { tools: aliasPicks(overrides.tools), prompts: aliasPicks(overrides.prompts) };
    compiled.set(overrides, made);
  }
  return made;
}

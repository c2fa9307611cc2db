/**
 * The named servers' layer around the pipeline, inside the catalog modes (so a search ranks,
 * and `sys___call_tool` calls, a server's own names) and outside everything else: on a named
 * server's route it serves exactly its picks (serve-server.ts); on /mcp, the aliases of the
 * overrides document. What it runs is loaded from its own module only when a server is used
 * or an alias is stored (loader.ts): the main module keeps this glue.
 */
import type { Handler } from "../../context/call-context";
import { methodFacts } from "../../core/methods";
import { OVERRIDES_KEY } from "../../storage/document-keys";
import { loadDocument } from "../../storage/document-store";
import { checkOverrides, type OverridesDocument } from "../shaping/overrides-document";
import { loadNamedServers, MAIN_PARTS } from "./loader";
import { loadServer } from "./store";

export type NamedServerOptions = { readonly cacheTtlMs: number };

const aliased = new WeakMap<OverridesDocument, boolean>();

/** True when the overrides document gives any tool or prompt an alias (kept per document version). */
function hasAliases(document: OverridesDocument): boolean {
  let found = aliased.get(document);
  if (found === undefined) {
    const some = (table: OverridesDocument["tools"]) => Object.values(table).some((o) => o.alias !== undefined);
    found = some(document.tools) || some(document.prompts);
    aliased.set(document, found);
  }
  return found;
}

/**
 * Wraps the pipeline in the named servers' layer; elsewhere than a server's route and /mcp it changes nothing.
 *
 * @example
 * const handle = catalogModes(namedServers(classifyTargets(observed), { cacheTtlMs }), options);
 */
export function namedServers(next: Handler, { cacheTtlMs }: NamedServerOptions): Handler {
  return async function namedServers(ctx, message) {
    if (message.kind !== "request") return next(ctx, message);
    const name = ctx.route.server;
    const kv = ctx.services.kv;
    if (name !== undefined) {
      const library = await loadNamedServers();
      // Deleted since the request was routed: it serves nothing more.
      const server = (await loadServer(kv, name, cacheTtlMs, library.checkNamedServer)) ?? library.NO_PICKS;
      return library.serveServer(ctx, message.wire, server, next, MAIN_PARTS);
    }
    if (ctx.route.name !== "" || !kv || !methodFacts(message.wire.message.method).carriesNames)
      return next(ctx, message);
    const overrides = await loadDocument(kv, OVERRIDES_KEY, cacheTtlMs, checkOverrides);
    if (overrides.state !== "valid" || !hasAliases(overrides.value)) return next(ctx, message);
    return (await loadNamedServers()).serveMcpAliases(ctx, message.wire, overrides.value, next);
  };
}

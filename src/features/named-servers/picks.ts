/**
 * A named server's picks compiled once per document: exact picks and aliases in maps,
 * globs in a list, so deciding one listed entry costs one lookup plus the globs (each
 * linear: core/glob.ts), never the whole document.
 */
import { NAME_SEPARATOR } from "../../core/names";
import type { UpstreamConfig } from "../../config/upstreams";
import { isGlob, matchesGlob } from "../../core/glob";
import type { NamedServer, Pick } from "./document";

/** The picks of one kind (tools or prompts), by the name /mcp lists and by alias. */
export type NamePicks = {
  /** The pick serving the listed `<upstream>___<name>`, if any. */
  readonly of: (key: string) => Pick | undefined;
  /** The pick an alias names. */
  readonly byAlias: (alias: string) => Pick | undefined;
};

/** A compiled server. */
export type CompiledServer = {
  readonly tools: NamePicks;
  readonly prompts: NamePicks;
  /** True when a resource (its upstream when known, its URI or name) is picked. */
  readonly servesResource: (upstream: string | undefined, uri: string | undefined, name: string | undefined) => boolean;
  /** The upstreams any pick may reach. */
  readonly upstreams: (all: readonly UpstreamConfig[]) => UpstreamConfig[];
};

function namePicks(picks: readonly Pick[]): NamePicks {
  const exact = new Map<string, Pick>();
  const aliases = new Map<string, Pick>();
  const globs: Pick[] = [];
  for (const pick of picks) {
    if (isGlob(pick.pick)) globs.push(pick);
    else exact.set(pick.pick, pick);
    if (pick.alias !== undefined) aliases.set(pick.alias, pick);
  }
  return {
    of: (key) => exact.get(key) ?? globs.find((pick) => matchesGlob(pick.pick, key)),
    byAlias: (alias) => aliases.get(alias),
  };
}

/** `<upstream>___<rest>` split at its first separator (a checked pick always has one). */
function sides(pick: string): { upstream: string; rest: string } {
  const at = pick.indexOf(NAME_SEPARATOR);
  return { upstream: pick.slice(0, at), rest: pick.slice(at + NAME_SEPARATOR.length) };
}

const compiled = new WeakMap<NamedServer, CompiledServer>();

/**
 * The compiled form of `server` (kept beside the document's cached copy).
 *
 * @example
 * compileServer(server).tools.byAlias("find_issues")?.pick; // "github___search_issues"
 */
export function compileServer(server: NamedServer): CompiledServer {
  const kept = compiled.get(server);
  if (kept) return kept;
  const resources = server.resources.map((pick) => sides(pick.pick));
  const upstreamGlobs = [...server.tools, ...server.prompts, ...server.resources].map((p) => sides(p.pick).upstream);
  const literal = new Set(upstreamGlobs.filter((glob) => !isGlob(glob)));
  const globs = upstreamGlobs.filter(isGlob);
  const made: CompiledServer = {
    tools: namePicks(server.tools),
    prompts: namePicks(server.prompts),
    servesResource: (upstream, uri, name) =>
      resources.some(
        (pick) =>
          (upstream === undefined || matchesGlob(pick.upstream, upstream)) &&
          ((uri !== undefined && matchesGlob(pick.rest, uri)) || (name !== undefined && matchesGlob(pick.rest, name))),
      ),
    upstreams: (all) => all.filter((u) => literal.has(u.name) || globs.some((glob) => matchesGlob(glob, u.name))),
  };
  compiled.set(server, made);
  return made;
}

/**
 * A named server's document (KV `servers/<name>`): what one team's URL serves, picked from
 * the aggregated catalog. Checked on every write; each problem located by a JSON Pointer.
 *
 * ```yaml
 * title: Support
 * instructions: Search tickets first; the wiki has the runbooks.
 * catalog: full            # full | compact | search | code (as personas have)
 * roles: [support]         # who may use it (absent: whoever may use /mcp)
 * tools:
 *   - zendesk___search_tickets
 *   - { pick: github___search_issues, alias: find_issues, description: "Issues of our repos." }
 *   - wiki___*
 * prompts: [wiki___summarise]
 * resources: ["wiki___docs://*"]
 * ```
 *
 * An alias has no `___`, so it can never be the `<upstream>___<name>` of another tool or a
 * gateway `sys___` tool; it is given to one exact pick (a glob picks many).
 */
import { isObject } from "../../core/jsonrpc";
import { NAME_SEPARATOR } from "../../core/names";
import { deepFreeze } from "../../storage/document-limits";
import { at, checkText, rootProblem, unknownFields } from "../../storage/document-checks";
import { isGlob } from "../../core/glob";
import { CATALOG_MODES, isCatalogMode, type CatalogMode } from "../../context/grant";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { checkAlias } from "../shaping/overrides-document";

/** Picks a server lists at most per kind (tools, prompts, resources). */
export const MAX_PICKS_PER_KIND = 1_000;
/** Roles a server names at most. */
export const MAX_SERVER_ROLES = 64;
/** The longest role name, in characters. */
const MAX_ROLE_CHARS = 128;
/** The longest pick, in characters. */
const MAX_PICK_CHARS = 512;
/** A tool or prompt pick: `<upstream>___<name>`, either side may be a glob. */
const NAME_PICK = /^[A-Za-z0-9_*?.:-]+$/;
/** A resource pick: `<upstream>___<URI or name>`, printable ASCII without spaces. */
const RESOURCE_PICK = /^[\x21-\x7e]+$/;

/** One picked tool, prompt or resource. */
export type Pick = {
  /** `<upstream>___<name>` (a glob when it holds `*` or `?`). */
  readonly pick: string;
  /** The name it is listed and called by here (exact picks of tools and prompts only). */
  readonly alias?: string;
  readonly title?: string;
  readonly description?: string;
};

export type NamedServer = {
  readonly title?: string;
  readonly instructions?: string;
  readonly catalog?: CatalogMode;
  /** Absent: whoever may use /mcp may use it. */
  readonly roles?: readonly string[];
  readonly tools: readonly Pick[];
  readonly prompts: readonly Pick[];
  readonly resources: readonly Pick[];
};

type Kind = "tools" | "prompts" | "resources";

function checkPick(entry: unknown, path: string, kind: Kind, problems: DocumentProblem[]): Pick | undefined {
  const renames = kind !== "resources";
  const fields = renames ? ["pick", "alias", "title", "description"] : ["pick"];
  const value = typeof entry === "string" ? { pick: entry } : entry;
  if (!isObject(value)) {
    const shape = renames ? "{pick, alias?, title?, description?}" : "{pick}";
    problems.push({ path, message: `must be "<upstream>___<name>" or ${shape}` });
    return undefined;
  }
  unknownFields(value, fields, path, problems);
  const pick = value["pick"];
  const where = typeof entry === "string" ? path : at(path, "pick");
  const pattern = renames ? NAME_PICK : RESOURCE_PICK;
  const separator = typeof pick === "string" ? pick.indexOf(NAME_SEPARATOR) : -1;
  if (typeof pick !== "string" || pick.length > MAX_PICK_CHARS || !pattern.test(pick) || separator <= 0) {
    const what = renames ? "a name or glob (letters, digits, _ . : - and * ?)" : "a URI, name or glob";
    problems.push({ path: where, message: `must be "<upstream>___<${kind.slice(0, -1)}>", ${what}` });
    return undefined;
  }
  const out: { pick: string; alias?: string; title?: string; description?: string } = { pick };
  const alias = value["alias"];
  if (alias !== undefined && checkAlias(alias, at(path, "alias"), problems)) {
    if (isGlob(pick)) problems.push({ path: at(path, "alias"), message: "a glob picks many; alias one name" });
    else out.alias = alias;
  }
  for (const field of ["title", "description"] as const)
    if (value[field] !== undefined && checkText(value[field], at(path, field), problems)) out[field] = value[field];
  return out;
}

function checkPicks(value: unknown, kind: Kind, problems: DocumentProblem[]): Pick[] {
  const path = `/${kind}`;
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_PICKS_PER_KIND) {
    problems.push({ path, message: `must be a list of at most ${MAX_PICKS_PER_KIND} picks` });
    return [];
  }
  const picks: Pick[] = [];
  const exact = new Set<string>();
  const aliases = new Set<string>();
  value.forEach((entry, index) => {
    const pick = checkPick(entry, at(path, index), kind, problems);
    if (!pick) return;
    if (!isGlob(pick.pick) && exact.has(pick.pick))
      problems.push({ path: at(path, index), message: `"${pick.pick}" is picked twice` });
    if (pick.alias !== undefined && aliases.has(pick.alias))
      problems.push({ path: at(at(path, index), "alias"), message: `"${pick.alias}" names two ${kind}` });
    exact.add(pick.pick);
    if (pick.alias !== undefined) aliases.add(pick.alias);
    picks.push(pick);
  });
  return picks;
}

function checkRoles(value: unknown, problems: DocumentProblem[]): string[] | undefined {
  if (value === undefined) return undefined;
  const ok =
    Array.isArray(value) &&
    value.length > 0 &&
    value.length <= MAX_SERVER_ROLES &&
    value.every((role) => typeof role === "string" && role.length > 0 && role.length <= MAX_ROLE_CHARS);
  if (ok) return value as string[];
  const message = `must be a list of 1-${MAX_SERVER_ROLES} role names (1-${MAX_ROLE_CHARS} characters each)`;
  problems.push({ path: "/roles", message });
  return undefined;
}

/**
 * Validates a named server's document.
 *
 * @example
 * checkNamedServer({ tools: [{ pick: "alpha___echo", alias: "say" }] }); // { ok: true, value: ... }
 */
export function checkNamedServer(value: unknown): Checked<NamedServer> {
  const root = rootProblem(value, "{title?, instructions?, catalog?, roles?, tools?, prompts?, resources?}");
  if (root || !isObject(value)) return { ok: false, problems: [root!] };
  const problems: DocumentProblem[] = [];
  const known = ["title", "instructions", "catalog", "roles", "tools", "prompts", "resources"];
  unknownFields(value, known, "", problems);
  const server: { -readonly [K in keyof NamedServer]: NamedServer[K] } = {
    tools: checkPicks(value["tools"], "tools", problems),
    prompts: checkPicks(value["prompts"], "prompts", problems),
    resources: checkPicks(value["resources"], "resources", problems),
  };
  for (const field of ["title", "instructions"] as const)
    if (value[field] !== undefined && checkText(value[field], `/${field}`, problems)) server[field] = value[field];
  const catalog = value["catalog"];
  if (catalog !== undefined) {
    if (isCatalogMode(catalog)) server.catalog = catalog;
    else problems.push({ path: "/catalog", message: `must be one of ${CATALOG_MODES.join(", ")}` });
  }
  const roles = checkRoles(value["roles"], problems);
  if (roles) server.roles = roles;
  if (problems.length === 0 && server.tools.length + server.prompts.length + server.resources.length === 0)
    problems.push({ path: "/tools", message: "a server serves at least one tool, prompt or resource" });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: deepFreeze(server) };
}

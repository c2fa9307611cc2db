/**
 * Personas: what a principal may call, chosen by the principal's roles. A persona names
 * the roles it applies to and glob patterns (`*`, `?`, as filter keys) over
 * `<upstream>___<name>` keys of tools, prompts and resource templates:
 *
 *   {"roles": ["analyst"], "allow": ["github___get_*", "jira___*"], "deny": ["*___delete_*"], "default": false, "rateLimit": "standard"}
 *
 * A principal whose roles select several personas gets the union of their allows minus
 * the union of their denies (deny wins). One persona may be the default, for principals
 * whose roles select none; with no default such a principal may call nothing.
 *
 * A persona may also choose how its callers see the catalog of tools ("catalog": "full",
 * "compact", "search" or "code", `CATALOG_MODES`, context/grant.ts); a client's `?catalog=` overrides it per request.
 *
 * All personas live in one KV document ("personas": name to persona), so resolving a
 * caller's grant is one cached read.
 */
import { isObject } from "../../core/jsonrpc";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { deniesLoosely, foldName, matchesGlob } from "../../core/glob";
import { CATALOG_MODES, isCatalogMode, type CatalogMode, type Grant } from "../../context/grant";

export const PERSONA_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const PATTERN = /^[A-Za-z0-9_*?.:/-]{1,256}$/;
const MAX_PATTERNS = 256;
const MAX_PERSONAS = 256;

export type Persona = {
  readonly roles: readonly string[];
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  readonly default: boolean;
  /** A rate limit configured in AUTH.rateLimits. */
  readonly rateLimit?: string;
  /** How the persona's callers see the tool catalog when their request names no mode. */
  readonly catalog?: CatalogMode;
};

export type Personas = Readonly<Record<string, Persona>>;

function patterns(value: unknown, at: string, problems: DocumentProblem[]): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_PATTERNS) {
    problems.push({ path: at, message: `a list of up to ${MAX_PATTERNS} patterns` });
    return [];
  }
  value.forEach((item, index) => {
    if (typeof item !== "string" || !PATTERN.test(item))
      problems.push({ path: `${at}/${index}`, message: "a pattern: letters, digits, _ - . : / and the wildcards * ?" });
  });
  return value.filter((item): item is string => typeof item === "string");
}

/** Checks one persona as the admin API receives it; paths are relative to `base`. */
export function checkPersona(value: unknown, base = ""): Checked<Persona> {
  const problems: DocumentProblem[] = [];
  if (!isObject(value))
    return {
      ok: false,
      problems: [
        { path: base, message: 'a persona: {"roles": [...], "allow": [...], "deny"?: [...], "default"?: false}' },
      ],
    };
  for (const key of Object.keys(value)) {
    if (!["roles", "allow", "deny", "default", "rateLimit", "catalog"].includes(key))
      problems.push({
        path: `${base}/${key}`,
        message: "not a field of a persona (roles, allow, deny, default, rateLimit, catalog)",
      });
  }
  const roles = value["roles"];
  if (!Array.isArray(roles) || !roles.every((role) => typeof role === "string" && role !== ""))
    problems.push({ path: `${base}/roles`, message: "a list of role names" });
  const allow = patterns(value["allow"], `${base}/allow`, problems);
  const deny = patterns(value["deny"], `${base}/deny`, problems);
  if (value["default"] !== undefined && typeof value["default"] !== "boolean")
    problems.push({ path: `${base}/default`, message: "true or false" });
  if (value["rateLimit"] !== undefined && (typeof value["rateLimit"] !== "string" || value["rateLimit"] === ""))
    problems.push({ path: `${base}/rateLimit`, message: "the name of a limit in AUTH.rateLimits" });
  const catalog = value["catalog"];
  if (catalog !== undefined && !isCatalogMode(catalog))
    problems.push({ path: `${base}/catalog`, message: `one of ${CATALOG_MODES.join(", ")}` });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: {
      roles: roles as string[],
      allow,
      deny,
      default: value["default"] === true,
      ...(typeof value["rateLimit"] === "string" ? { rateLimit: value["rateLimit"] } : {}),
      ...(isCatalogMode(catalog) ? { catalog } : {}),
    },
  };
}

/** Checks the whole personas document: valid personas, at most one default. */
export function checkPersonas(value: unknown): Checked<Personas> {
  if (!isObject(value)) return { ok: false, problems: [{ path: "", message: "an object of persona name to persona" }] };
  const problems: DocumentProblem[] = [];
  const out: Record<string, Persona> = {};
  const names = Object.keys(value);
  if (names.length > MAX_PERSONAS) problems.push({ path: "", message: `at most ${MAX_PERSONAS} personas` });
  for (const name of names) {
    if (!PERSONA_NAME.test(name))
      problems.push({ path: `/${name}`, message: "a persona name is 1-64 letters, digits, '-' or '_'" });
    const checked = checkPersona(value[name], `/${name}`);
    if (checked.ok) out[name] = checked.value;
    else problems.push(...checked.problems);
  }
  const defaults = Object.keys(out).filter((name) => out[name]!.default);
  if (defaults.length > 1)
    problems.push({ path: "", message: `only one persona may be the default; ${defaults.join(", ")} are` });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: out };
}

/**
 * The grant of a caller with `roles`: every persona one of the roles selects, else the
 * default persona; undefined when there is none (the caller may call nothing).
 *
 * @example
 * grantFor({ analyst: { roles: ["analyst"], allow: ["gh___*"], deny: [], default: false } }, ["analyst"])
 * // { persona: "analyst", allow: ["gh___*"], deny: [] }
 */
export function grantFor(personas: Personas, roles: readonly string[]): Grant | undefined {
  const names = Object.keys(personas).sort();
  let chosen = names.filter((name) => personas[name]!.roles.some((role) => roles.includes(role)));
  if (chosen.length === 0) chosen = names.filter((name) => personas[name]!.default);
  if (chosen.length === 0) return undefined;
  const rateLimit = chosen.map((name) => personas[name]!.rateLimit).find((limit) => limit !== undefined);
  const catalog = chosen.map((name) => personas[name]!.catalog).find((mode) => mode !== undefined);
  return {
    persona: chosen.join("+"),
    allow: chosen.flatMap((name) => personas[name]!.allow),
    deny: chosen.flatMap((name) => personas[name]!.deny),
    ...(rateLimit !== undefined ? { rateLimit } : {}),
    ...(catalog !== undefined ? { catalog } : {}),
  };
}

/**
 * True when the grant lets the caller use `key` (`<upstream>___<name>`): some allow matches
 * exactly and no deny matches any spelling of it (an upstream may resolve `DELETE_all`, or
 * its fullwidth form, to the tool denied as `delete_*`; another spelling of a long tool to its
 * shortened name: see `deniesLoosely`).
 */
export function permits(grant: Grant | undefined, key: string): boolean {
  if (!grant) return false;
  if (!grant.allow.some((glob) => matchesGlob(glob, key))) return false;
  return !grant.deny.some((glob) => deniesLoosely(glob, key));
}

/**
 * True when the grant may let the caller use something of `upstream` (judged by each
 * allow's literal start, as offload's include lists are), and no deny takes the whole
 * upstream: what `resources/read` of that upstream's URIs follows.
 */
export function permitsUpstream(grant: Grant | undefined, upstream: string): boolean {
  if (!grant) return false;
  const prefix = `${upstream}___`;
  const literal = (glob: string) => glob.split(/[*?]/)[0]!;
  const allowed = grant.allow.some((glob) => literal(glob).startsWith(prefix) || prefix.startsWith(literal(glob)));
  const deniedAll = grant.deny.some(
    (glob) =>
      glob.indexOf("*") === glob.length - 1 &&
      !glob.includes("?") &&
      foldName(prefix).startsWith(foldName(glob.slice(0, -1))),
  );
  return allowed && !deniedAll;
}

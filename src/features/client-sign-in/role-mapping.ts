/**
 * The live role mapping of signed-in users: a KV document the operator edits through the
 * admin API (`/admin/sign-in-roles`, validated on write), saying which roles a user gets
 * from a group (a value of `AUTH.signIn.rolesClaim` at login), their email's domain or
 * their email:
 *
 *   {"rules": [{"group": "eng", "roles": ["engineers"]},
 *              {"emailDomain": "example.com", "roles": ["staff"]},
 *              {"email": "ada@example.com", "roles": ["admins"]}]}
 *
 * It is read at every use of a token (access-token.ts, through the cached document
 * store), so an edit reaches tokens already issued at their next call, within the document
 * cache TTL (FILTER_CACHE_TTL_MS, 30 s by default) and KV's propagation (up to ~60 s
 * elsewhere): no new sign-in or refresh is needed. The roles it gives are added to the
 * grant's own (AUTH.signIn.roles and the claim's values, fixed at login); a stored document
 * that is not valid (written into KV by hand) gives none.
 */
import { isObject } from "../../core/jsonrpc";
import { loadDocument, type Checked, type DocumentProblem } from "../../storage/document-store";
import type { SignedInUser } from "./authorization-server";

/** The KV key of the document (in GATEWAY_KV, beside personas). */
export const ROLE_MAPPING_KEY = "client-sign-in/roles";
/** The most rules a mapping holds; a user is matched against each at every call. */
export const MAX_MAPPING_RULES = 1_000;
/** The most roles one rule gives, each at most MAX_MAPPED_ROLE_CHARS characters. */
export const MAX_ROLES_PER_RULE = 64;
export const MAX_MAPPED_ROLE_CHARS = 256;

const MATCHERS = ["group", "emailDomain", "email"] as const;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
type Matcher = (typeof MATCHERS)[number];

export type MappingRule = { readonly on: Matcher; readonly value: string; readonly roles: readonly string[] };
export type RoleMapping = { readonly rules: readonly MappingRule[] };

function checkRule(raw: unknown, at: string, problems: DocumentProblem[]): MappingRule | undefined {
  const problem = (path: string, message: string) => problems.push({ path, message });
  if (!isObject(raw)) {
    problem(at, 'a rule: {"group" | "emailDomain" | "email": "<value>", "roles": ["<role>", ...]}');
    return undefined;
  }
  for (const key of Object.keys(raw)) {
    const known = key === "roles" || (MATCHERS as readonly string[]).includes(key);
    if (!known) problem(`${at}/${key}`, "not a field of a rule (group, emailDomain, email, roles)");
  }
  const present = MATCHERS.filter((matcher) => raw[matcher] !== undefined);
  if (present.length !== 1) problem(at, "say what the rule matches with exactly one of group, emailDomain, email");
  const on = present[0];
  const value = on === undefined ? undefined : raw[on];
  const text = typeof value === "string" ? value : undefined;
  if (on !== undefined && !text) problem(`${at}/${on}`, "a non-empty string");
  if (on === "emailDomain" && text?.includes("@")) {
    problem(`${at}/emailDomain`, 'the domain as after the @ ("example.com")');
  }
  if (on === "email" && text !== undefined && !EMAIL.test(text)) problem(`${at}/email`, "an email address");
  const roles = raw["roles"];
  const rolesOk =
    Array.isArray(roles) &&
    roles.length > 0 &&
    roles.length <= MAX_ROLES_PER_RULE &&
    roles.every((role) => typeof role === "string" && role !== "" && role.length <= MAX_MAPPED_ROLE_CHARS);
  const rolesText =
    `a list of 1 to ${MAX_ROLES_PER_RULE} roles, ` +
    `each a non-empty string of at most ${MAX_MAPPED_ROLE_CHARS} characters`;
  if (!rolesOk) problem(`${at}/roles`, rolesText);
  if (on === undefined || typeof value !== "string" || !rolesOk) return undefined;
  return { on, value: on === "group" ? value : value.toLowerCase(), roles: roles as string[] };
}

/** The mapping document, checked; every problem located by a JSON Pointer. */
export function checkRoleMapping(raw: unknown): Checked<RoleMapping> {
  const problems: DocumentProblem[] = [];
  if (!isObject(raw) || !Array.isArray(raw["rules"])) {
    return { ok: false, problems: [{ path: "", message: 'a document {"rules": [...]}' }] };
  }
  for (const key of Object.keys(raw)) {
    if (key !== "rules") problems.push({ path: `/${key}`, message: "not a field of the mapping (rules)" });
  }
  const list = raw["rules"];
  if (list.length > MAX_MAPPING_RULES) problems.push({ path: "/rules", message: `at most ${MAX_MAPPING_RULES} rules` });
  const rules = list.slice(0, MAX_MAPPING_RULES).map((rule, i) => checkRule(rule, `/rules/${i}`, problems));
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: { rules: rules as MappingRule[] } };
}

/** The roles `mapping` gives `user` (linear in the rules). */
export function mappedRoles(mapping: RoleMapping, user: SignedInUser): string[] {
  const email = user.email.toLowerCase();
  const domain = email.slice(email.lastIndexOf("@") + 1);
  const groups = new Set(user.groups ?? []);
  const roles = new Set<string>();
  for (const rule of mapping.rules) {
    const hit =
      rule.on === "group"
        ? groups.has(rule.value)
        : rule.on === "emailDomain"
          ? domain === rule.value
          : email === rule.value;
    if (hit) for (const role of rule.roles) roles.add(role);
  }
  return [...roles];
}

/**
 * The user's roles now: the grant's, and those the stored mapping gives (none when there is no KV or no valid
 * document).
 */
export async function currentRoles(
  user: SignedInUser,
  kv: KVNamespace | undefined,
  cacheTtlMs: number,
): Promise<string[]> {
  if (!kv) return [...user.roles];
  const stored = await loadDocument(kv, ROLE_MAPPING_KEY, cacheTtlMs, checkRoleMapping);
  if (stored.state !== "valid") return [...user.roles];
  return [...new Set([...user.roles, ...mappedRoles(stored.value, user)])];
}

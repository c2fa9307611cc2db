/**
 * Default deny, explained: with AUTH on, a caller whose roles select no persona (and no
 * default persona exists) lists no tools and every call is "Unknown tool", which says
 * nothing to the operator. The call record names the cause (`denied`, the audit event's
 * `gateway.denied`), and the gateway's log (the `npm start` terminal, `wrangler tail`)
 * says once per isolate and cause what is wrong and how to fix it. The caller is told
 * nothing more: a refusal never says whether a tool exists.
 */
import type { CallContext } from "../../context/call-context";
import { whyNoGrant, type NoPersonaCause } from "./persona-grant";

/** Distinct (cause, roles) an isolate warns about; past it, the record still names the cause. */
const MAX_WARNINGS = 100;
/** Characters of a principal or of the roles a log line repeats. */
const MAX_SHOWN_CHARS = 120;
/** What the authorization middleware records for a call a grant does not permit. */
export const NOT_ALLOWED = "not allowed by persona";

const warned = new Set<string>();

function cut(text: string): string {
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
}

function fixOf(cause: NoPersonaCause): string {
  switch (cause) {
    case "no persona defined":
      return (
        'no persona is defined: add one, e.g. PUT /admin/personas/<name> with {"roles": ["<a role of your keys>"], ' +
        '"allow": ["*"]}, or on the console\'s Personas page'
      );
    case "no persona for roles":
      return (
        "no persona selects any of its roles and none is the default: give a persona one of its roles " +
        '(PUT /admin/personas/<name>), mark one {"default": true}, or give the key a role a persona selects'
      );
    case "personas document invalid":
      return "the personas document is invalid, which denies every caller: GET /admin/personas shows its problems";
    case "no KV binding":
      return "the GATEWAY_KV binding is missing from wrangler.toml, so no persona can be read";
    default: {
      const never: never = cause;
      return never;
    }
  }
}

/**
 * Why the caller of `ctx` has no grant, noted on its call record (and logged once per
 * isolate for each cause and set of roles). Call it only when `ctx.grant()` found none.
 */
export async function explainNoPersona(ctx: CallContext): Promise<void> {
  const { roles, principal } = ctx.identity;
  const cause = await whyNoGrant(ctx.services.kv, roles, ctx.services.config.documentCacheTtlMs);
  if (cause === undefined) return;
  ctx.record.denied = cause;
  const key = `${cause}\u0000${roles.join("\u0000")}`;
  if (warned.has(key) || warned.size >= MAX_WARNINGS) return;
  warned.add(key);
  const shownRoles = roles.length === 0 ? "no roles" : `roles: ${cut(roles.join(", "))}`;
  const who = `${JSON.stringify(cut(principal))} (${JSON.stringify(shownRoles).slice(1, -1)})`;
  console.warn(
    `mcp-edge-gateway: warning: ${who} gets no persona (${cause}), ` +
      `so it lists no tools and every call is "Unknown tool" (default deny); ` +
      `${fixOf(cause)}. See docs/authentication.md, "Personas".`,
  );
}

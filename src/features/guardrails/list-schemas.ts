/**
 * A tool whose results a `redact` rule may change loses its `outputSchema` in tools/list,
 * for the callers the rule applies to. A marker replaces a matched stretch of a string, or
 * a whole member named like a secret (whatever its type): the redacted `structuredContent`
 * may no longer match the upstream's schema (a number field become a string, an email
 * field's format, an enum), and a client that validates against the schema (the MCP SDKs
 * do) would refuse the result. Without an outputSchema a client takes `structuredContent`
 * as it comes. Every other byte of the list is the upstream's; the schema is withheld for
 * the tool, not per call, so it does not come and go with what a result happens to hold.
 */
import { splice, removeMemberSplice, type Splice } from "../../core/raw-json";
import type { CallContext } from "../../context/call-context";
import { listedEntries } from "../../pipeline/list-items";
import { NAME_SEPARATOR, shortenedStart } from "../../core/names";
import type { Guardrails } from "./document";
import { rulesFor } from "./guard-call";

/**
 * `text` (a tools/list answer) with `outputSchema` removed from every tool a result-side
 * `redact` rule applies to for this caller.
 *
 * @example
 * return withholdRedactedSchemas(ctx, await next(ctx, request), guardrails);
 */
export function withholdRedactedSchemas(ctx: CallContext, text: string, guardrails: Guardrails): string {
  if (!guardrails.rules.some((rule) => rule.action === "redact" && rule.on.includes("result"))) return text;
  const persona = ctx.record.persona;
  // A shortened name hides the tool's own: rules are then matched by upstream and persona, whatever tools they name.
  const anyTool = { ...guardrails, rules: guardrails.rules.map(({ tools: _tools, ...rule }) => rule) };
  const edits: Splice[] = [];
  for (const entry of listedEntries(ctx.route, "tools/list", text)) {
    if (entry.upstream === undefined || entry.key === undefined) continue;
    const shortened = ctx.route.kind === "aggregated" && shortenedStart(entry.key) !== undefined;
    const tool =
      ctx.route.kind === "upstream" && entry.name !== undefined
        ? entry.name
        : entry.key.slice(entry.upstream.length + NAME_SEPARATOR.length);
    const scope = { upstream: entry.upstream, tool, ...(persona !== undefined ? { persona } : {}) };
    if (!rulesFor(shortened ? anyTool : guardrails, scope, "result").some((rule) => rule.action === "redact")) continue;
    const edit = removeMemberSplice(text, entry.span, "outputSchema");
    if (edit) edits.push(edit);
  }
  return edits.length > 0 ? splice(text, edits) : text;
}

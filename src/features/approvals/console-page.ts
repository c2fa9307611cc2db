/**
 * The console's Approvals page (loaded on demand, with the rest of approvals): every call
 * held for approval (tool, caller, when, the rule and its roles, the arguments as approvers
 * see them: guardrails' findings and secrets' values replaced), each with Approve and Deny,
 * sent through /admin/approvals as the operator. Written with hono's `html` template (which
 * escapes every value: arguments and names are shown as text, never as markup) inside the
 * console's frame, which the main module passes in (routes.ts): so this module carries no
 * JSX runtime and no layout of its own.
 */
import { html } from "hono/html";
import type { ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import type { renderPage, statusOf } from "../../admin/console/render";
import type { href } from "../../admin/console/layout";
import { isObject } from "../../core/jsonrpc";
import type { HeldCall } from "../../context/object-rpc";

/** The console's frame, from the main module. */
export type ConsoleFrame = {
  readonly render: typeof renderPage;
  readonly statusOf: typeof statusOf;
  readonly href: typeof href;
};

function row(call: HeldCall, csrf: string, frame: ConsoleFrame) {
  const since = new Date(call.requestedAt).toISOString();
  return html`<tr>
  <td><code>${call.upstream}___${call.tool}</code><br /><span class="muted">rule ${call.rule}</span></td>
  <td>${call.caller}</td>
  <td><time datetime="${since}">${since}</time></td>
  <td>${call.roles.join(", ")}</td>
  <td><pre>${JSON.stringify(call.arguments, null, 2)}</pre></td>
  <td><form method="post" action="${frame.href(`/approvals/${call.id}`)}" class="inline">
    <input type="hidden" name="csrf" value="${csrf}" />
    <button type="submit" name="decision" value="approve">Approve</button>
    <button type="submit" name="decision" value="deny">Deny</button>
  </form></td>
</tr>`;
}

/** The page: the held calls, and what went wrong reading or deciding one. */
export async function approvalsPage(
  c: ConsoleContext,
  frame: ConsoleFrame,
  failed?: { error: string; status: number },
): Promise<Response> {
  const listed = await c.var.call("GET", "/approvals");
  const body = isObject(listed.body) ? listed.body : {};
  const calls = (listed.ok && Array.isArray(body["approvals"]) ? body["approvals"] : []) as HeldCall[];
  const problem = failed ?? (listed.ok ? undefined : { error: errorOf(listed).error, status: listed.status });
  const csrf = c.var.session.csrf;
  const content = html`<p class="muted">
  Calls held by guardrails' approve rules until a person other than the caller approves them (docs/guardrails.md).
  An approval runs the exact call once, within the rule's hold.
</p>
${problem ? html`<div id="approvals-errors" class="problems" role="alert"><p>${problem.error}</p></div>` : ""}
${
  calls.length === 0
    ? html`<p id="approvals-empty">No call is waiting for approval.</p>`
    : html`<table id="approvals">
  <thead><tr>
    <th>Tool</th><th>Caller</th><th>Held since</th><th>Approvers' roles</th><th>Arguments</th><th>Decision</th>
  </tr></thead>
  <tbody>${calls.map((call) => row(call, csrf, frame))}</tbody>
</table>`
}`;
  return frame.render(c, "Approvals", "/approvals", content, problem ? frame.statusOf(problem.status) : 200);
}

/** The form's decision, sent as the operator; back to the list, or the API's refusal above it. */
export async function decideFromConsole(c: ConsoleContext, frame: ConsoleFrame, id: string): Promise<Response> {
  const decision = c.var.form.get("decision");
  const answer = await c.var.call("POST", `/approvals/${encodeURIComponent(id)}`, JSON.stringify({ decision }));
  if (answer.ok) return c.redirect(frame.href("/approvals"), 303);
  return approvalsPage(c, frame, { error: errorOf(answer).error, status: answer.status });
}

/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * The console's Approvals page (loaded on demand, with the rest of approvals): every call
 * held for approval (tool, caller, when, the rule and its roles, the arguments as approvers
 * see them: guardrails' findings and secrets' values replaced), each with Approve and Deny,
 * sent through /admin/approvals as the operator. Arguments are shown as text, never as markup.
 */
import { Fragment, h } from "../../admin/console/jsx";
import type { ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import { CsrfField, href, Problems } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import { isObject } from "../../core/jsonrpc";
import type { HeldCall } from "../../context/object-rpc";

function HeldCallRow({ call, csrf }: { call: HeldCall; csrf: string }) {
  return (
    <tr>
      <td>
        <code>
          {call.upstream}___{call.tool}
        </code>
        <br />
        <span class="muted">rule {call.rule}</span>
      </td>
      <td>{call.caller}</td>
      <td>
        <time datetime={new Date(call.requestedAt).toISOString()}>{new Date(call.requestedAt).toISOString()}</time>
      </td>
      <td>{call.roles.join(", ")}</td>
      <td>
        <pre>{JSON.stringify(call.arguments, null, 2)}</pre>
      </td>
      <td>
        <form method="post" action={href(`/approvals/${call.id}`)} class="inline">
          <CsrfField csrf={csrf} />
          <button type="submit" name="decision" value="approve">
            Approve
          </button>{" "}
          <button type="submit" name="decision" value="deny">
            Deny
          </button>
        </form>
      </td>
    </tr>
  );
}

/** The page: the held calls, or what went wrong reading or deciding one. */
export async function approvalsPage(c: ConsoleContext, failed?: { error: string; status: number }): Promise<Response> {
  const listed = await c.var.call("GET", "/approvals");
  const calls =
    listed.ok && isObject(listed.body) && Array.isArray(listed.body["approvals"]) ? listed.body["approvals"] : [];
  const problem = failed ?? (listed.ok ? undefined : { error: errorOf(listed).error, status: listed.status });
  const body = (
    <>
      <p class="muted">
        Calls held by guardrails' approve rules until a person other than the caller approves them (docs/guardrails.md).
        An approval runs the exact call once, within the rule's hold.
      </p>
      <Problems id="approvals-errors" error={problem?.error} problems={[]} />
      {calls.length === 0 ? (
        <p id="approvals-empty">No call is waiting for approval.</p>
      ) : (
        <table id="approvals">
          <thead>
            <tr>
              <th>Tool</th>
              <th>Caller</th>
              <th>Held since</th>
              <th>Approvers' roles</th>
              <th>Arguments</th>
              <th>Decision</th>
            </tr>
          </thead>
          <tbody>
            {(calls as HeldCall[]).map((call) => (
              <HeldCallRow call={call} csrf={c.var.session.csrf} />
            ))}
          </tbody>
        </table>
      )}
    </>
  );
  return renderPage(c, "Approvals", "/approvals", body, problem ? statusOf(problem.status) : 200);
}

/** The form's decision, sent as the operator; back to the list, or the API's refusal beside it. */
export async function decideFromConsole(c: ConsoleContext, id: string): Promise<Response> {
  const decision = c.var.form.get("decision");
  const answer = await c.var.call("POST", `/approvals/${encodeURIComponent(id)}`, JSON.stringify({ decision }));
  if (answer.ok) return c.redirect(href("/approvals"), 303);
  return approvalsPage(c, { error: errorOf(answer).error, status: answer.status });
}

/**
 * The approvers' HTTP API, answered the same way on two mounts (routes.ts):
 *
 *   GET  /approvals             held calls the caller may decide (same credential as /mcp)
 *   GET  /approvals/<id>        one held call (its approvers and its caller may read it)
 *   POST /approvals/<id>        {"decision": "approve" | "deny"}
 *   ... and the same under /admin/approvals for the operator (admin token: every held call)
 *
 * Answers: 200 with the call; 403 for the caller's own call or a principal without the
 * rule's roles; 404 for an id no held call has; 409 once decided; 503 without the APPROVALS
 * binding. Every decision, and every refused one, is an audit event.
 */
import type { HeldCall } from "../../context/object-rpc";
import type { Services } from "../../context/call-context";
import { readRequestTextUpTo } from "../../core/bounded-text";
import { isObject } from "../../core/jsonrpc";
import { approvalEvent, auditApproval } from "./approval-events";
import { decideHeldCall, listHeldCalls, readHeldCall, type Approver } from "./desk";

/** The most a decision's body may hold, in bytes (`{"decision": "approve"}` is 23). */
export const MAX_DECISION_BODY_BYTES = 1024;

/** One request to the approvers' API: `rest` is the path after `/approvals` ("" or "/<id>"). */
export type ApproverRequest = {
  readonly request: Request;
  readonly rest: string;
  readonly approver: Approver;
  readonly services: Services;
  readonly waitUntil: (promise: Promise<unknown>) => void;
  /** The mount, for audit events: "/approvals" or "/admin/approvals". */
  readonly route: string;
};

const NO_STORE = { "cache-control": "no-store" };

function json(body: unknown, status = 200): Response {
  return Response.json(body, { status, headers: NO_STORE });
}

async function decisionOf(request: Request): Promise<boolean | string> {
  const text = await readRequestTextUpTo(request, MAX_DECISION_BODY_BYTES);
  let body: unknown;
  try {
    body = text === undefined ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const decision = isObject(body) ? body["decision"] : undefined;
  if (decision === "approve" || decision === "deny") return decision === "approve";
  return 'send {"decision": "approve"} or {"decision": "deny"}';
}

/**
 * Answers one request of the approvers' API.
 *
 * @example
 * return answerApprover({ request, rest: "/" + id, approver, services, waitUntil, route: "/approvals" });
 */
export async function answerApprover(input: ApproverRequest): Promise<Response> {
  const { request, rest, approver, services } = input;
  const namespace = services.approvals;
  if (!namespace)
    return json({ error: "approvals are not set up: the gateway has no APPROVALS binding (wrangler.toml)" }, 503);
  const id = rest.replace(/^\//, "");
  if (id === "") {
    if (request.method !== "GET") return json({ error: "GET lists held calls; decide one at /approvals/<id>" }, 405);
    return json({ approvals: await listHeldCalls(services.kv, namespace, approver) });
  }
  if (request.method === "GET") {
    const call = await readHeldCall(namespace, id, approver);
    return call ? json({ approval: call }) : json({ error: `no held call "${id}" that you may see` }, 404);
  }
  if (request.method !== "POST") return json({ error: "GET reads a held call, POST decides it" }, 405);
  const approve = await decisionOf(request);
  if (typeof approve === "string") return json({ error: approve }, 400);
  const outcome = await decideHeldCall(services.kv, namespace, id, approver, approve);
  const audit = (kind: "approved" | "denied" | "refused", call: HeldCall, detail?: string) =>
    auditApproval(services.auditQueue, input.waitUntil, [
      approvalEvent(kind, call, approver.operator ? "(operator)" : approver.principal, input.route, detail),
    ]);
  switch (outcome.kind) {
    case "decided":
      audit(approve ? "approved" : "denied", outcome.call);
      return json({ approval: outcome.call });
    case "unknown":
      return json({ error: `no held call "${id}": it was never held, was decided and used, or waited too long` }, 404);
    case "own-call":
      audit("refused", outcome.call, "own call");
      return json({ error: "you cannot decide your own call: another person with the rule's roles must" }, 403);
    case "not-an-approver":
      audit("refused", outcome.call, "no approver role");
      return json(
        { error: `only a principal with the role ${outcome.call.roles.join(" or ")} may decide this call` },
        403,
      );
    case "already-decided":
      return json({ error: `this call was already ${outcome.call.state} by ${outcome.call.decidedBy}` }, 409);
  }
}

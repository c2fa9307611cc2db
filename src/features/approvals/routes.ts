/**
 * Where approvals plug into the gateway (src/gateway.ts, src/chain.ts), each a thin mount
 * over the code loaded on demand (load.ts): the gate guardrails call for `approve` rules,
 * the approvers' API (`/approvals`, same credential as /mcp), its operator's mount
 * (`/admin/approvals`, admin token) and the console's Approvals page.
 */
import type { Context, Hono } from "hono";
import type { AdminRoutes } from "../../admin/app";
import type { ConsoleApp } from "../../admin/console/context";
import { href } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import type { TokenVerifierFor } from "../../auth/authenticate";
import { servicesFor } from "../../shell/services";
import type { ApprovalGate } from "../guardrails/guard-call";
import { requestCaller } from "../upstream-sign-in/sign-in-routes";
import type { ConsoleFrame } from "./console-page";
import type { Approver } from "./desk";
import { loadApprovals } from "./load";

/** Holds calls under guardrails' `approve` rules (gate.ts). */
export const approvalGate: ApprovalGate = async (ctx, request, need, shown) =>
  (await loadApprovals()).holdForApproval(ctx, request, need, shown);

type Env = { Bindings: { GATEWAY_KV?: KVNamespace; [binding: string]: unknown } };

async function answer(c: Context<Env>, approver: Approver, route: string): Promise<Response> {
  const rest = new URL(c.req.url).pathname.slice(new URL(c.req.url).pathname.indexOf(route) + route.length);
  return (await loadApprovals()).answerApprover({
    request: c.req.raw,
    rest,
    approver,
    services: servicesFor(c.env),
    waitUntil: (promise) => c.executionCtx.waitUntil(promise),
    route,
  });
}

/** The approvers' API at /approvals, for callers authenticated as on /mcp. */
export function addApproverRoutes(verifierFor: TokenVerifierFor): (app: Hono<Env>) => void {
  return (app) => {
    const handler = async (c: Context<Env>) => {
      const caller = await requestCaller(c.env, c.req.header("authorization"), c.req.url, verifierFor);
      if (caller instanceof Response) return caller;
      return answer(c, { principal: caller.principal, roles: caller.roles, operator: false }, "/approvals");
    };
    app.all("/approvals", handler);
    app.all("/approvals/:id", handler);
  };
}

/** The operator's mount of the same API: /admin/approvals (every held call, decisions as "(operator)"). */
export const addApprovalAdminRoutes: AdminRoutes = (admin) => {
  const handler = (c: Context<Env>) => answer(c, { principal: "(operator)", roles: [], operator: true }, "/approvals");
  admin.all("/approvals", handler);
  admin.all("/approvals/:id", handler);
};

/** The console's frame, which the page (console-page.ts, loaded on demand) writes its body into. */
const FRAME: ConsoleFrame = { render: renderPage, statusOf, href };

/** The console's Approvals page (console-page.ts). */
export function registerApprovalsPage(app: ConsoleApp): void {
  app.get("/approvals", async (c) => (await loadApprovals()).approvalsPage(c, FRAME));
  app.post("/approvals/:id", async (c) => (await loadApprovals()).decideFromConsole(c, FRAME, c.req.param("id")));
}

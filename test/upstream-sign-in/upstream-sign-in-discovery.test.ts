/**
 * How a sign-in learns where and for what to ask (MCP authorization, 2025-11-25 and
 * 2026-07-28): a first sign-in reads the upstream's 401 (`resource_metadata` and `scope` of
 * its WWW-Authenticate), the protected resource metadata is looked for at the path-based
 * well-known URI and then at the root one, and a step-up asks for the scope already granted
 * together with the challenge's (SEP-2350). Through the Worker in workerd against the
 * fixture's upstreams `hidden…`, `root…` and `stepup…` (test/fixtures/oauth-upstream.ts).
 */
import { describe, expect, it } from "vitest";
import { initialize, request, type Json, type Vars } from "../helpers/gateway";
import { admin } from "../helpers/auth";
import { Browser } from "../helpers/sign-in";
import { askText, callerSeen, linkOf, signInWorld, type Who } from "../helpers/sign-in-world";

const { origin, label, vars: VARS, caller } = signInWorld();

/** An upstream `name` at the fixture's `/<prefix><label>/mcp`, a caller allowed it, and its calls. */
async function world(name: string, prefix: string) {
  const upstreams = [{ name, url: `${origin}/${prefix}${label}/mcp`, auth: { type: "oauth" } }];
  const vars: Vars = { ...VARS, UPSTREAMS: JSON.stringify(upstreams) };
  expect(
    (await admin("PUT", `/personas/${name}-users`, { roles: [`${name}-user`], allow: [`${name}___*`] }, vars)).status,
  ).toBe(200);
  const who: Who = await caller([`${name}-user`]);
  const id = (await initialize("/mcp", { vars, headers: who.headers })).session;
  const call = (tool: string): Promise<Json> =>
    request("/mcp", id, "tools/call", { name: `${name}___${tool}`, arguments: {} }, { vars, headers: who.headers });
  const signIn = async (response: Json, user: string) => {
    const done = await new Browser(vars).signIn(linkOf(response), user);
    expect(done.status, await done.clone().text()).toBe(200);
  };
  return { call, signIn };
}

describe("a first sign-in reads the upstream's 401", () => {
  it("uses the metadata its resource_metadata names and the scope it asks for", async () => {
    const { call, signIn } = await world(`hid${label}`, "hidden");
    await signIn(await call("whoami"), "hana@idp");
    // The 401 asked for tools:read and tools:admin: the first sign-in got both, no step-up needed.
    const seen = callerSeen(await call("admin_action"));
    expect(seen.sub).toBe("hana@idp");
    expect(seen.scope.split(" ")).toEqual(expect.arrayContaining(["tools:read", "tools:admin"]));
  });

  it("falls back to the root well-known URI, naming the resource that metadata publishes", async () => {
    const { call, signIn } = await world(`rt${label}`, "root");
    await signIn(await call("whoami"), "rui@idp");
    // The upstream takes only tokens for its origin, the resource the root metadata names;
    // they are inside the refresh margin, so each call refreshes, naming the origin again.
    const first = callerSeen(await call("whoami"));
    const second = callerSeen(await call("whoami"));
    expect([first.sub, second.sub]).toEqual(["rui@idp", "rui@idp"]);
    expect(second.jti).not.toBe(first.jti);
  });
});

describe("a step-up", () => {
  it("asks for the scope already granted together with the challenge's (SEP-2350)", async () => {
    const { call, signIn } = await world(`up${label}`, "stepup");
    await signIn(await call("whoami"), "sol@idp");
    const refused = await call("admin_action");
    expect(askText(refused)).toContain("tools:admin");
    await signIn(refused, "sol@idp");
    const seen = callerSeen(await call("admin_action"));
    expect(seen.scope.split(" ")).toEqual(expect.arrayContaining(["tools:read", "tools:admin"]));
    // The narrower call still works with the new token.
    expect(callerSeen(await call("whoami")).sub).toBe("sol@idp");
  });
});

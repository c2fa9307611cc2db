/**
 * Per-user sign-in works for a live upstream as for a declared one: a live upstream with
 * `auth: {"type": "oauth"}` asks a caller without a token to sign in, with a link to the
 * gateway's own sign-in page for that upstream, which opens. (A client that declared URL
 * elicitation is asked by elicitation/create and its call waits for the sign-in, as for a
 * declared upstream: test/upstream-sign-in.test.ts.) Through the Worker in
 * workerd, with the fixture authorization server of test/fixtures/oauth-upstream.ts.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { gatewayFetch, initialize, request } from "../helpers/gateway";
import { ADMIN_TOKEN, admin, authVars, makeKey } from "../helpers/auth";
import { Browser, oauthFixture } from "../helpers/sign-in";
import { linkOf } from "../helpers/sign-in-world";

const label = crypto.randomUUID().slice(0, 8);
const live = `signin${label.slice(0, 6)}`;
const VARS = authVars({ apiKeys: true }, { FILTER_CACHE_TTL_MS: "0" });

describe("a live upstream that signs its users in", () => {
  afterAll(async () => {
    await (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV.delete("live-upstreams");
  });

  it("asks a caller without a token to sign in, with a link that opens the upstream's sign-in page", async () => {
    const body = JSON.stringify({ url: `${oauthFixture().origin}/acme${label}/mcp`, auth: { type: "oauth" } });
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
    const path = `http://127.0.0.1:8787/admin/upstreams/${live}?probe=false`;
    const put = await gatewayFetch(path, { method: "PUT", headers, body }, VARS);
    expect(put.status).toBe(201);
    const persona = { roles: ["user"], allow: [`${live}___*`] };
    expect((await admin("PUT", "/personas/users", persona, VARS)).status).toBe(200);

    const { headers: caller } = await makeKey({ principal: `user-${label}`, roles: ["user"] }, VARS);
    const { session } = await initialize("/mcp", { vars: VARS, headers: caller });
    const call = { name: `${live}___whoami`, arguments: {} };
    const asked = await request("/mcp", session, "tools/call", call, { vars: VARS, headers: caller });
    expect(asked.result?.isError).toBe(true); // a client that declared no URL elicitation is told in a tool error
    const link = linkOf(asked);
    expect(link).toContain(`/oauth/upstream/${live}/start`);
    const page = await new Browser(VARS).request(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(live);
  });
});

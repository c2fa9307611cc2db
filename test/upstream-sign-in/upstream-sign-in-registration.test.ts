/**
 * What the gateway sends and accepts when it registers itself as a client of an upstream's
 * authorization server (src/upstream/oauth/registration.ts): SEP-837's `application_type`
 * in the registration request and in its Client ID Metadata Document, and a registration
 * answer whose client secret comes without `client_secret_expires_at` (RFC 7591 requires
 * it; many servers leave it out, the MCP conformance suite's among them). Through the
 * Worker in workerd, against the fixture's `secret…` authorization server
 * (test/fixtures/oauth-upstream.ts).
 */
import { describe, expect, it } from "vitest";
import { gatewayFetch, initialize, request, type Vars } from "../helpers/gateway";
import { admin } from "../helpers/auth";
import { Browser } from "../helpers/sign-in";
import { callerSeen, linkOf, signInWorld } from "../helpers/sign-in-world";

const { origin, label, vars: VARS, caller } = signInWorld();
const NAME = `reg${label}`;
const upstreams = [{ name: NAME, url: `${origin}/secret${label}/mcp`, auth: { type: "oauth" } }];
const vars: Vars = { ...VARS, UPSTREAMS: JSON.stringify(upstreams) };

describe("registering with an upstream's authorization server", () => {
  it("accepts a client secret without client_secret_expires_at, and signs in with it", async () => {
    expect(
      (await admin("PUT", `/personas/${NAME}-users`, { roles: [`${NAME}-user`], allow: [`${NAME}___*`] }, vars)).status,
    ).toBe(200);
    const who = await caller([`${NAME}-user`]);
    const id = (await initialize("/mcp", { vars, headers: who.headers })).session;
    const call = () =>
      request("/mcp", id, "tools/call", { name: `${NAME}___whoami`, arguments: {} }, { vars, headers: who.headers });
    const done = await new Browser(vars).signIn(linkOf(await call()), "sam@idp");
    const page = await done.text();
    expect(done.status, page).toBe(200);
    expect(page).not.toContain("client_secret_expires_at");
    // The token was exchanged with the issued secret (client_secret_basic): the upstream knows the user.
    expect(callerSeen(await call()).sub).toBe("sam@idp");
    // The registration request named what the gateway is (SEP-837).
    const received = (await (await fetch(`${origin}/registrations`)).json()) as {
      redirect_uris: string[];
      application_type?: string;
    }[];
    const ours = received.filter((r) => r.redirect_uris.some((uri) => uri.includes(`/callback/${NAME}/`)));
    expect(ours.length).toBe(1);
    expect(ours[0]!.application_type).toBe("web");
  });

  it("names application_type web in its Client ID Metadata Document", async () => {
    const served = await gatewayFetch("https://gateway.test/oauth/upstream/client-metadata.json", {}, vars);
    expect(served.status).toBe(200);
    expect(JSON.parse(await served.text())).toMatchObject({ application_type: "web" });
  });
});

/**
 * Client sign-in (AUTH.signIn) under attack: each test is an attempt that must get no code,
 * no token or no access, and would get one without its defence. PKCE left out or `plain`,
 * an authorization code used twice, a token for one upstream's route used on another's,
 * a user of a domain the gateway does not allow, a redirect URI the client never registered,
 * the provider's answer brought to the gateway by another browser than the one that began.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin } from "../helpers/auth";
import { initialize, post, type Json } from "../helpers/gateway";
import {
  authorizeUrl,
  CLIENT_REDIRECT,
  GATEWAY,
  pkcePair,
  registerClient,
  signedInToken,
  signInVars,
  SignInUser,
  tokenRequest,
} from "../helpers/client-sign-in";
import { consentPolicy } from "../../src/features/client-sign-in/pages";

const UPSTREAMS = JSON.stringify([
  { name: "alpha", url: inject("fixtureUrls").alpha },
  { name: "beta", url: inject("fixtureUrls").beta },
]);
let vars: Json;

beforeAll(async () => {
  vars = signInVars({}, { UPSTREAMS });
  expect(
    (
      await admin(
        "PUT",
        "/personas/attack-admins",
        { roles: ["gateway-admins"], allow: ["alpha___*", "beta___*"] },
        vars,
      )
    ).status,
  ).toBe(200);
});
// The suite shares one KV: personas left behind would add their tools to every later file's users of these roles.
afterAll(async () => {
  await admin("DELETE", "/personas/attack-admins", undefined, vars);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

describe("client sign-in refuses", () => {
  it.each([
    ["no PKCE", undefined, "S256"],
    ["PKCE plain", "plain-challenge-that-is-long-enough-to-look-real-0123456789", "plain"],
  ])(
    "%s: the client is answered with an error, the browser never reaches the provider",
    async (_label, challenge, method) => {
      const clientId = await registerClient(vars);
      const end = await new SignInUser(vars, "ada").walk(authorizeUrl({ clientId, challenge, method }));
      expect(end.redirect?.searchParams.get("error")).toBe("invalid_request");
      expect(end.redirect?.searchParams.get("code")).toBeNull();
    },
  );

  it("a code used twice: the second exchange gets no token", async () => {
    const clientId = await registerClient(vars);
    const { verifier, challenge } = await pkcePair();
    const end = await new SignInUser(vars, "ada").walk(authorizeUrl({ clientId, challenge }));
    const code = end.redirect!.searchParams.get("code")!;
    const first = await tokenRequest(vars, { client_id: clientId, code, code_verifier: verifier });
    expect(first.status).toBe(200);
    const again = await tokenRequest(vars, { client_id: clientId, code, code_verifier: verifier });
    expect(again.status).toBe(400);
    expect(((await again.json()) as Json).error).toBe("invalid_grant");
  });

  it("a token for one upstream's route on another's, or on /mcp", async () => {
    const { access_token: token } = await signedInToken(vars, "admin-eve", `${GATEWAY}/mcp/alpha`);
    expect((await initialize(`${GATEWAY}/mcp/alpha`, { vars, headers: bearer(token) })).session).toBeTruthy();
    for (const path of ["/mcp/beta", "/mcp"]) {
      const response = await post(`${GATEWAY}${path}`, LIST, { vars, headers: bearer(token) });
      expect(response.status, path).toBe(401);
      expect(response.headers.get("www-authenticate"), path).toContain('error="invalid_token"');
    }
  });

  it("a user whose email domain is not allowed: a page saying so, no consent, no code", async () => {
    const clientId = await registerClient(vars);
    const { challenge } = await pkcePair();
    const end = await new SignInUser(vars, "mallory@elsewhere.test").walk(authorizeUrl({ clientId, challenge }));
    expect(end.redirect).toBeUndefined();
    expect(end.page?.status).toBe(403);
    expect(end.page?.text).toContain("mallory@elsewhere.test may not sign in");
  });

  it("a redirect URI the client did not register: an error page, never a redirect there", async () => {
    const clientId = await registerClient(vars);
    const { challenge } = await pkcePair();
    const evil = "https://attacker.example/steal";
    const end = await new SignInUser(vars, "ada").walk(authorizeUrl({ clientId, challenge, redirectUri: evil }), evil);
    expect(end.redirect).toBeUndefined();
    expect(end.page?.status).toBe(400);
    expect(end.page?.url).toContain(`${GATEWAY}/oauth/authorize`);
  });

  it("a client registering only a redirect URI of another scheme than https or loopback http", async () => {
    await expect(registerClient(vars, ["http://attacker.example/callback"])).rejects.toThrow(/registration: 400/);
    expect(CLIENT_REDIRECT.startsWith("http://127.0.0.1")).toBe(true);
  });

  it("the provider's answer opened in another browser: refused, and no code for anyone", async () => {
    const clientId = await registerClient(vars);
    const { challenge } = await pkcePair();
    const begun = await new SignInUser(vars, "ada").walk(
      authorizeUrl({ clientId, challenge }),
      `${GATEWAY}/oauth/sign-in/callback`,
    );
    const callback = begun.redirect!.href;
    const other = await new SignInUser(vars, "eve").request(callback);
    expect(other.status).toBe(400);
    expect(other.headers.get("location")).toBeNull();
    expect(await other.text()).toContain("Sign-in request refused");
  });
});

describe("the consent page's Content-Security-Policy", () => {
  it.each([
    ["http://127.0.0.1:33418/callback?x=1", "http://127.0.0.1:33418"],
    ["https://app.example/oauth/callback", "https://app.example"],
    ["com.example.app:/callback", "com.example.app:"],
  ])("lets the form's answer redirect to %s and nowhere else", (redirectUri, allowed) => {
    expect(consentPolicy(redirectUri)).toBe(
      `default-src 'none'; form-action 'self' ${allowed}; frame-ancestors 'none'`,
    );
  });
});

/**
 * AUTH.signIn (src/features/client-sign-in/config.ts): what a valid one becomes, and each
 * mistake refused with a problem that names where it is and what to write instead.
 */
import { describe, expect, it } from "vitest";
import { parseAuthConfig } from "../../src/config/auth-config";
// The composition root adds AUTH.signIn's parser (the skeleton imports no feature).
import "../../src/gateway";
import { post } from "../helpers/gateway";

const GOOD = { issuer: "https://idp.example", clientId: "SIGN_IN_CLIENT_ID", allowedDomains: ["Example.com"] };

function problemsOf(signIn: unknown, rest: Record<string, unknown> = {}): readonly string[] {
  const parsed = parseAuthConfig({ ...rest, signIn });
  return parsed.ok ? [] : parsed.problems;
}

describe("AUTH.signIn", () => {
  it("turns authentication on by itself, with defaults for what it does not say", () => {
    const parsed = parseAuthConfig(
      JSON.stringify({
        signIn: { ...GOOD, rolesClaim: "groups", roles: ["staff"], clientSecret: "SIGN_IN_CLIENT_SECRET" },
      }),
    );
    expect(parsed).toEqual({
      ok: true,
      value: {
        mode: "on",
        apiKeys: false,
        scopes: [],
        rateLimits: {},
        signIn: {
          provider: "oidc",
          issuer: "https://idp.example",
          clientIdSecret: "SIGN_IN_CLIENT_ID",
          clientSecretSecret: "SIGN_IN_CLIENT_SECRET",
          allowedDomains: ["example.com"],
          allowedEmails: [],
          rolesClaim: "groups",
          roles: ["staff"],
          scopes: ["openid", "email", "profile"],
        },
      },
    });
  });

  it("keeps API keys beside it", () => {
    const parsed = parseAuthConfig({ apiKeys: true, signIn: { ...GOOD, scopes: ["groups"] } });
    expect(parsed.ok && parsed.value.mode === "on" && parsed.value.apiKeys).toBe(true);
    expect(parsed.ok && parsed.value.mode === "on" && parsed.value.signIn?.scopes).toEqual([
      "openid",
      "email",
      "groups",
    ]);
  });

  it.each([
    ["not an object", "https://idp.example", /^AUTH\.signIn: an object/],
    ["no issuer", { ...GOOD, issuer: undefined }, /^AUTH\.signIn\.issuer: the issuer URL/],
    ["an http issuer off loopback", { ...GOOD, issuer: "http://idp.example" }, /^AUTH\.signIn\.issuer: an https URL/],
    ["an issuer with a query", { ...GOOD, issuer: "https://idp.example/?tenant=1" }, /^AUTH\.signIn\.issuer: no query/],
    [
      "a client id value instead of a secret's name",
      { ...GOOD, clientId: "123-abc.apps.googleusercontent.com" },
      /^AUTH\.signIn\.clientId: the name of a Worker secret/,
    ],
    [
      "a client secret value",
      { ...GOOD, clientSecret: "GOCSPX-abc/def" },
      /^AUTH\.signIn\.clientSecret: the name of a Worker secret/,
    ],
    ["nobody allowed", { ...GOOD, allowedDomains: undefined }, /^AUTH\.signIn: say who may sign in/],
    [
      "a domain written as an address",
      { ...GOOD, allowedDomains: ["@example.com"] },
      /^AUTH\.signIn\.allowedDomains: "@example\.com" is not a domain/,
    ],
    [
      "an email that is not one",
      { ...GOOD, allowedEmails: ["bob"] },
      /^AUTH\.signIn\.allowedEmails: "bob" is not an email/,
    ],
    ["a domain list as a string", { ...GOOD, allowedDomains: "example.com" }, /^AUTH\.signIn\.allowedDomains: a list/],
    ["an empty roles claim", { ...GOOD, rolesClaim: "" }, /^AUTH\.signIn\.rolesClaim: a claim/],
    [
      "an unknown field",
      { ...GOOD, allowedDomain: ["example.com"] },
      /^AUTH\.signIn\.allowedDomain: not a field of signIn/,
    ],
  ])("refuses %s, saying where", (_label, signIn, problem) => {
    const problems = problemsOf(signIn);
    expect(
      problems.some((p) => problem.test(p)),
      problems.join("\n"),
    ).toBe(true);
  });

  it("never quotes a secret's value back in a problem", () => {
    const problems = problemsOf({ ...GOOD, clientSecret: "GOCSPX-very-secret-value" });
    expect(problems.join("\n")).not.toContain("GOCSPX-very-secret-value");
  });

  it("an invalid signIn makes /mcp answer with the configuration error, not open", async () => {
    const response = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { vars: { AUTH: JSON.stringify({ apiKeys: true, signIn: { ...GOOD, issuer: "nope" } }) } },
    );
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /AUTH is invalid \(1 problem/,
    );
  });
});

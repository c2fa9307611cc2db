/**
 * The live role mapping of signed-in users (PUT /admin/sign-in-roles): roles from a group
 * (a value of the roles claim at login), an email domain or an email, validated on write,
 * and in force at the next use of a token already issued: no new sign-in, no refresh.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin } from "../helpers/auth";
import { gatewayFetch, type Json, type Vars } from "../helpers/gateway";
import { GATEWAY, signedInToken, signInVars } from "../helpers/client-sign-in";

const UPSTREAMS = JSON.stringify([
  { name: "alpha", url: inject("fixtureUrls").alpha },
  { name: "beta", url: inject("fixtureUrls").beta },
]);
const label = crypto.randomUUID().slice(0, 8);
let vars: Vars;

beforeAll(async () => {
  vars = signInVars({}, { UPSTREAMS });
  expect(
    (await admin("PUT", "/personas/signed-in-users", { roles: ["gateway-users"], allow: ["alpha___*"] }, vars)).status,
  ).toBe(200);
  expect(
    (await admin("PUT", "/personas/mapped-engineers", { roles: ["engineers"], allow: ["alpha___*", "beta___*"] }, vars))
      .status,
  ).toBe(200);
});
// The suite shares one KV: personas left behind would add their tools to every later file's users of these roles.
afterAll(async () => {
  await admin("DELETE", "/personas/signed-in-users", undefined, vars);
  await admin("DELETE", "/personas/mapped-engineers", undefined, vars);
});

/** The upstreams the token's holder reaches now (the gateway's home page, as that caller). */
async function reaches(token: string): Promise<string[]> {
  const home = (await (
    await gatewayFetch(`${GATEWAY}/`, { headers: { authorization: `Bearer ${token}` } }, vars)
  ).json()) as Json;
  return home.upstreams;
}

const putMapping = (document: unknown) => admin("PUT", "/sign-in-roles", document, vars);

describe("the live role mapping", () => {
  it.each([
    ["a group", { rules: [{ group: "gateway-users", roles: ["engineers"] }] }],
    ["an email domain", { rules: [{ emailDomain: "EXAMPLE.test", roles: ["engineers"] }] }],
    ["an email", { rules: [{ email: `ada-${label}@example.test`, roles: ["engineers"] }] }],
  ])("gives roles by %s at the next use of a token issued before, and takes them back", async (_name, mapping) => {
    expect((await admin("DELETE", "/sign-in-roles", undefined, vars)).status).toBeLessThan(500);
    const { access_token: token } = await signedInToken(vars, `ada-${label}`);
    expect(await reaches(token)).toEqual(["alpha"]);
    expect((await putMapping(mapping)).status).toBe(200);
    expect(await reaches(token)).toEqual(["alpha", "beta"]);
    expect((await admin("DELETE", "/sign-in-roles", undefined, vars)).status).toBe(200);
    expect(await reaches(token)).toEqual(["alpha"]);
  });

  it("gives nothing to a user it does not match", async () => {
    expect(
      (
        await putMapping({
          rules: [
            { group: "gateway-admins", roles: ["engineers"] },
            { emailDomain: "other.test", roles: ["engineers"] },
          ],
        })
      ).status,
    ).toBe(200);
    const { access_token: token } = await signedInToken(vars, `bob-${label}`);
    expect(await reaches(token)).toEqual(["alpha"]);
    expect((await admin("DELETE", "/sign-in-roles", undefined, vars)).status).toBe(200);
  });

  it.each([
    ["no rules list", { roles: ["x"] }, ""],
    ["two matchers in one rule", { rules: [{ group: "g", email: "a@b.test", roles: ["x"] }] }, "/rules/0"],
    ["no matcher", { rules: [{ roles: ["x"] }] }, "/rules/0"],
    ["no roles", { rules: [{ group: "g", roles: [] }] }, "/rules/0/roles"],
    ["a role that is not a string", { rules: [{ group: "g", roles: [7] }] }, "/rules/0/roles"],
    [
      "a domain written as an email",
      { rules: [{ emailDomain: "a@example.test", roles: ["x"] }] },
      "/rules/0/emailDomain",
    ],
    ["an unknown field", { rules: [{ group: "g", roles: ["x"], when: "always" }] }, "/rules/0/when"],
  ])("refuses %s on write, storing nothing", async (_name, document, path) => {
    expect((await putMapping({ rules: [{ group: "kept", roles: ["kept"] }] })).status).toBe(200);
    const refused = await putMapping(document);
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as Json;
    expect(body.error).toContain("nothing was stored");
    expect(body.problems.map((p: Json) => p.path)).toContain(path);
    expect(await (await admin("GET", "/sign-in-roles", undefined, vars)).json()).toEqual({
      rules: [{ group: "kept", roles: ["kept"] }],
    });
  });
});

/**
 * A program's call to an upstream that needs the user to sign in (UPSTREAMS[].auth, the
 * fixture authorization server of test/fixtures/oauth-upstream.ts), through the Worker in
 * workerd. The caller is signed in (a program only gets the tools its caller's list shows,
 * and an upstream that needs a sign-in lists nothing before it), and the program calls the
 * tool that needs a wider scope (the step-up sign-in): the call fails inside the program at
 * once, saying so, and the sign-in link reaches the client with the run's answer the way a
 * direct call's would — a tool error
 * holding the link, the -32042 error of a 2025 client that declared URL elicitation, or
 * `input_required` for a 2026-07-28 one. Once signed in, the same program runs through.
 */
import { describe, expect, it } from "vitest";
import { request, type Json } from "../helpers/gateway";
import { modern } from "../helpers/modern";
import { Browser } from "../helpers/sign-in";
import { linkOf, signInWorld, URL_ELICITATION } from "../helpers/sign-in-world";

const { vars, caller, session, signedIn } = signInWorld();
const PATH = "/mcp?catalog=code";
const CODE = 'try { return await tools.acme.admin_action({}); } catch (error) { return "failed: " + error.message; }';
const NEED = 'Upstream "acme" needs more access \\(tools:read tools:admin\\)';
const FAILED = new RegExp(`^failed: acme___admin_action failed: ${NEED}: the link went to the client`);
const ASKED = new RegExp(`^${NEED}: open the link`);

/** A caller signed in to acme as `user`, without the scope admin_action needs. */
async function signedInCaller(user: string) {
  const who = await caller();
  await signedIn(who, user);
  return who;
}

/** Signs in again through `link` (the step-up), as `user`. */
async function stepUp(link: string, user: string): Promise<void> {
  const browser = new Browser(vars);
  const callback = await browser.signInUntilCallback(link, user);
  expect((await browser.request(callback)).status).toBe(200);
}

async function run(who: Awaited<ReturnType<typeof caller>>, id: string): Promise<Json> {
  const params = { name: "sys___run_code", arguments: { code: CODE } };
  return request(PATH, id, "tools/call", params, { vars, headers: who.headers });
}

describe("a program's call that needs the user to sign in", () => {
  it("fails in the program; the run's answer gives the link after the value (no URL elicitation)", async () => {
    const who = await signedInCaller("ada@idp");
    const id = await session(who, PATH);
    const { result } = await run(who, id);
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0].text)).toMatch(FAILED);
    const link = /(https?:\/\/gateway\.test\/oauth\/upstream\/acme\/start\?link=\S+)/.exec(result.content[1].text)?.[1];
    expect(result.content[1].text).toContain("(the link works once, for 10 minutes); then call again.");
    await stepUp(link!, "ada@idp");
    // Signed in with the scope: the same program's call goes through, as the user.
    const again = (await run(who, id)).result;
    expect(again.isError).toBeUndefined();
    expect(JSON.parse(again.content[0].text)).toMatchObject({ sub: "ada@idp" });
  });

  it("answers a 2025 client that declared URL elicitation with the -32042 error naming the link", async () => {
    const who = await signedInCaller("bea@idp");
    const response = await run(who, await session(who, PATH, URL_ELICITATION));
    expect(response.error?.code, JSON.stringify(response)).toBe(-32042);
    expect(response.error.message).toMatch(ASKED);
    expect(linkOf(response)).toMatch(/\/oauth\/upstream\/acme\/start\?link=/);
  });

  it("answers a 2026-07-28 client asking by URL with input_required; its retry runs again", async () => {
    const who = await signedInCaller("cleo@idp");
    const params = { name: "sys___run_code", arguments: { code: CODE } };
    const options = { vars, headers: who.headers, capabilities: URL_ELICITATION };
    const asked = (await modern(PATH, "tools/call", params, options)).result;
    expect(asked.resultType, JSON.stringify(asked)).toBe("input_required");
    const question = asked.inputRequests["sign-in"];
    expect(question).toMatchObject({ method: "elicitation/create", params: { mode: "url" } });
    await stepUp(question.params.url, "cleo@idp");
    const retried = { ...params, inputResponses: { "sign-in": { action: "accept" } } };
    const answer = (await modern(PATH, "tools/call", retried, options)).result;
    expect(answer.resultType).toBe("complete");
    expect(JSON.parse(answer.content[0].text)).toMatchObject({ sub: "cleo@idp" });
  });
});

/**
 * The world of the per-user sign-in tests (test/upstream-sign-in*.test.ts): two upstreams
 * of the fixture that check users' tokens (test/fixtures/oauth-upstream.ts) under fresh
 * names, API-key callers of their own, their sessions and calls, and how to read the
 * answers that ask a user to sign in.
 */
import { beforeAll, expect } from "vitest";
import { initialize, request, type Json, type Vars } from "./gateway";
import { admin, authVars, makeKey } from "./auth";
import { Browser, oauthFixture } from "./sign-in";

export const URL_ELICITATION = { elicitation: { url: {} } };

export type Who = { principal: string; headers: Record<string, string> };

/** What an answer asking to sign in says: a -32042 error's message, or a tool error's text. */
export function askText(response: Json): string {
  if (response.error?.code === -32042) return response.error.message as string;
  expect(response.result?.isError, JSON.stringify(response)).toBe(true);
  return response.result.content[0].text as string;
}

/** True for an answer asking to sign in (a -32042 error, or a tool error with a sign-in link). */
export function asksToSignIn(response: Json): boolean {
  return (
    response.error?.code === -32042 ||
    (response.result?.isError === true && String(response.result.content[0].text).includes("/oauth/upstream/"))
  );
}

/** The sign-in link of a -32042 answer (its URL-mode elicitation) or of a tool error's text. */
export function linkOf(response: Json): string {
  if (response.error?.code === -32042) {
    const [elicitation] = response.error.data.elicitations;
    expect(elicitation.mode).toBe("url");
    expect(typeof elicitation.elicitationId).toBe("string");
    return elicitation.url as string;
  }
  const link = /(https?:\/\/gateway\.test\/oauth\/upstream\/[^/]+\/start\?link=\S+)/.exec(askText(response))?.[1];
  expect(link, JSON.stringify(response)).toBeDefined();
  return link!;
}

/** What the upstream said of its caller (whoami / admin_action). */
export function callerSeen(response: Json): { sub: string; jti: string; scope: string } {
  expect(response.result?.isError, JSON.stringify(response)).not.toBe(true);
  return JSON.parse(response.result.content[0].text);
}

/**
 * Upstreams "acme" (hour-long tokens) and "shorty" (tokens inside the refresh margin) under
 * a fresh label, vars with API keys on, a persona reaching both (set before the file's
 * tests), and the helpers of a test.
 */
export function signInWorld() {
  const { origin } = oauthFixture();
  const label = crypto.randomUUID().slice(0, 8);
  const upstreams = [
    { name: "acme", url: `${origin}/acme${label}/mcp`, auth: { type: "oauth" } },
    { name: "shorty", url: `${origin}/short${label}/mcp`, auth: { type: "oauth" } },
  ];
  const vars: Vars = authVars({ apiKeys: true }, { UPSTREAMS: JSON.stringify(upstreams), FILTER_CACHE_TTL_MS: "0" });
  const personas = { users: { roles: ["user"], allow: ["acme___*", "shorty___*"] } };
  let counter = 0;

  beforeAll(async () => {
    for (const [name, persona] of Object.entries(personas))
      expect((await admin("PUT", `/personas/${name}`, persona, vars)).status).toBe(200);
  });

  /** A caller of its own (an API key for a fresh principal, by default with the "user" role). */
  async function caller(roles = ["user"]): Promise<Who> {
    const principal = `user-${label}-${counter++}`;
    const { headers } = await makeKey({ principal, roles }, vars);
    return { principal, headers };
  }

  /** A 2025 session on `path` for `who` that declared `capabilities` (none: asked by a tool error). */
  async function session(who: Who, path = "/mcp", capabilities: Record<string, unknown> = {}): Promise<string> {
    return (await initialize(path, { capabilities, vars, headers: who.headers })).session;
  }

  function callTool(who: Who, sessionId: string, name: string, path = "/mcp"): Promise<Json> {
    return request(path, sessionId, "tools/call", { name, arguments: {} }, { vars, headers: who.headers });
  }

  /** Signs `who` in to `upstream` (asked on /mcp), as the authorization server's user `user`; returns the session. */
  async function signedIn(who: Who, user: string, upstream = "acme"): Promise<string> {
    const id = await session(who);
    const link = linkOf(await callTool(who, id, `${upstream}___whoami`));
    const done = await new Browser(vars).signIn(link, user);
    expect(done.status, await done.clone().text()).toBe(200);
    return id;
  }

  return { origin, label, upstreams, vars, personas, caller, session, callTool, signedIn };
}

/**
 * `auth: {"type": "userKey"}`: a caller without a key is pointed at the gateway's key page
 * (a tool error for a 2025 client that declared no URL elicitation, `input_required` for a
 * 2026-07-28 client that did); the key pasted there is stored sealed for that principal,
 * sent in the configured header on the next call, listed and revocable with the user's
 * connections, forgotten when the upstream refuses it. The form refuses another origin, a
 * missing CSRF cookie and a used link; no page, listing or upstream request carries what it
 * must not (the key shown back, the client's own API key upstream). Through the Worker,
 * against test/fixtures/user-credentials-upstream.ts.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { gatewayFetch, initialize, request, type Json } from "../helpers/gateway";
import { admin, authVars, makeKey } from "../helpers/auth";
import { Browser } from "../helpers/sign-in";
import { askText } from "../helpers/sign-in-world";
import { modern } from "../helpers/modern";

const { origin } = inject("userCredentialsUpstream");
const label = crypto.randomUUID().slice(0, 8);
const UPSTREAMS = [{ name: "keyed", url: `${origin}/k${label}/mcp`, auth: { type: "userKey", header: "X-Api-Key" } }];
const VARS = authVars({ apiKeys: true }, { UPSTREAMS: JSON.stringify(UPSTREAMS), FILTER_CACHE_TTL_MS: "0" });
const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;
let counter = 0;

async function caller(): Promise<{ principal: string; headers: Record<string, string>; key: string }> {
  const principal = `key-user-${label}-${counter++}`;
  const made = await makeKey({ principal, roles: ["user"] }, VARS);
  return { principal, headers: made.headers, key: made.key };
}

function keyLink(response: Json): string {
  const link = /(http:\/\/gateway\.test\/oauth\/upstream\/keyed\/key\?link=\S+)/.exec(askText(response))?.[1];
  expect(link, JSON.stringify(response)).toBeDefined();
  return link!;
}

/** A 2025 session of `who` on /mcp, and its call of keyed___whoami. */
async function whoamiIn(who: { headers: Record<string, string> }): Promise<() => Promise<Json>> {
  const { session } = await initialize("/mcp", { vars: VARS, headers: who.headers });
  const params = { name: "keyed___whoami", arguments: {} };
  return () => request("/mcp", session, "tools/call", params, { vars: VARS, headers: who.headers });
}

/** The key form's fields, as the page holds them. */
function formFields(html: string, key: string): string {
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replaceAll("&amp;", "&");
  return new URLSearchParams({ link: field("link")!, csrf: field("csrf")!, key }).toString();
}

/** Opens `link` and submits `key` as the browser would; returns the page the POST answered. */
async function pasteKey(browser: Browser, link: string, key: string): Promise<Response> {
  const page = await browser.request(link);
  const html = await page.text();
  expect(page.status, html).toBe(200);
  return browser.request(link, {
    method: "POST",
    body: formFields(html, key),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://gateway.test" },
  });
}

function whoSeen(response: Json): { apiKey?: string; authorization?: string } {
  expect(response.result?.isError, JSON.stringify(response)).not.toBe(true);
  return JSON.parse(response.result.content[0].text);
}

describe("userKey upstreams", () => {
  beforeAll(async () => {
    const persona = { roles: ["user"], allow: ["keyed___*"] };
    expect((await admin("PUT", "/personas/key-users", persona, VARS)).status).toBe(200);
  });

  it("asks for a key, stores it sealed, sends it in its header and lists and revokes it", async () => {
    const who = await caller();
    const call = await whoamiIn(who);
    const link = keyLink(await call());

    const browser = new Browser(VARS);
    const key = `pat_${label}_alice`;
    const saved = await pasteKey(browser, link, key);
    const savedText = await saved.text();
    expect(saved.status, savedText).toBe(200);
    expect(savedText).not.toContain(key);

    expect(whoSeen(await call()).apiKey).toBe(key);
    // KV holds it sealed: no stored value contains the key.
    const stored = await kv.list({ prefix: "upstream-token/" });
    for (const entry of stored.keys) expect(await kv.get(entry.name)).not.toContain(key);

    const mine = await gatewayFetch("/oauth/upstream/connections", { headers: who.headers }, VARS);
    const listed = await mine.text();
    expect(JSON.parse(listed).connections).toEqual([
      expect.objectContaining({ principal: who.principal, upstream: "keyed", kind: "userKey" }),
    ]);
    expect(listed).not.toContain(key);

    // The upstream never saw the client's own API key, in any header of any request.
    const seen = JSON.stringify(await (await fetch(`${origin}/k${label}/seen`)).json());
    expect(seen).toContain(key);
    expect(seen).not.toContain(who.key);

    const revoke = { method: "DELETE", headers: who.headers };
    const revoked = await gatewayFetch("/oauth/upstream/connections?upstream=keyed", revoke, VARS);
    expect(revoked.status).toBe(200);
    expect(askText(await call())).toContain("/oauth/upstream/keyed/key?link=");
  });

  it("keeps each principal's key to itself", async () => {
    const [a, b] = [await caller(), await caller()];
    for (const [who, key] of [
      [a, `pat_${label}_a`],
      [b, `pat_${label}_b`],
    ] as const) {
      const call = await whoamiIn(who);
      expect((await pasteKey(new Browser(VARS), keyLink(await call()), key)).status).toBe(200);
      expect(whoSeen(await call()).apiKey).toBe(key);
    }
  });

  it("forgets a key the upstream refuses, and asks again", async () => {
    const who = await caller();
    const call = await whoamiIn(who);
    expect((await pasteKey(new Browser(VARS), keyLink(await call()), `refused-${label}`)).status).toBe(200);
    expect(askText(await call())).toContain("/oauth/upstream/keyed/key?link=");
    const listed = await (await gatewayFetch("/oauth/upstream/connections", { headers: who.headers }, VARS)).json();
    expect((listed as { connections: unknown[] }).connections).toEqual([]);
  });

  it("asks a 2026-07-28 client that declared URL elicitation with input_required", async () => {
    const who = await caller();
    const capabilities = { elicitation: { url: {} } };
    const params = { name: "keyed___whoami", arguments: {} };
    const asked = await modern("/mcp", "tools/call", params, { vars: VARS, headers: who.headers, capabilities });
    const question = asked.result?.inputRequests?.["sign-in"];
    expect(question?.params?.mode, JSON.stringify(asked)).toBe("url");
    expect(question.params.url).toContain("/oauth/upstream/keyed/key?link=");
    expect((await pasteKey(new Browser(VARS), question.params.url, `pat_${label}_modern`)).status).toBe(200);
    const done = await modern("/mcp", "tools/call", params, { vars: VARS, headers: who.headers, capabilities });
    expect(whoSeen(done).apiKey).toBe(`pat_${label}_modern`);
  });

  it("refuses a form from another origin or without the page's cookie, and takes a link once", async () => {
    const who = await caller();
    const link = keyLink(await (await whoamiIn(who))());
    const browser = new Browser(VARS);
    const formOf = async () => formFields(await (await browser.request(link)).text(), `pat_${label}_once`);
    const body = await formOf();
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const evil = { ...form, origin: "https://evil.test" };
    expect((await browser.request(link, { method: "POST", body, headers: evil })).status).toBe(403);
    expect((await gatewayFetch(link, { method: "POST", body, headers: form }, VARS)).status).toBe(403);
    // Neither refusal used the link up: the page's own form saves the key, once.
    expect((await browser.request(link, { method: "POST", body, headers: form })).status).toBe(200);
    const again = await formOf();
    expect((await browser.request(link, { method: "POST", body: again, headers: form })).status).toBe(410);
  });
});

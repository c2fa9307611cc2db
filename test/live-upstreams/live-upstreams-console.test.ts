/**
 * The console's Upstreams page adds, changes and removes live upstreams
 * (src/features/live-upstreams/console.tsx) through the admin API, and never shows a
 * stored credential back. The console is reached on a loopback host, as under `npm start`,
 * so the SDK upstream on loopback may be added.
 */
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { gatewayFetch, initialize, request } from "../helpers/gateway";
import { ADMIN_VARS } from "../helpers/admin";
import { formInit, signIn, type ConsoleSignIn } from "../helpers/console";

const LOCAL = "http://127.0.0.1:8787";
const CREDENTIAL = `console-credential-${crypto.randomUUID()}`;
const { alpha, beta } = inject("fixtureUrls");

let session: ConsoleSignIn;
const pages: string[] = [];

async function submit(path: string, fields: Record<string, string>): Promise<{ status: number; html: string }> {
  const init = formInit({ csrf: session.csrf, ...fields }, session.cookie, LOCAL);
  const response = await gatewayFetch(`${LOCAL}/admin/console${path}`, init, ADMIN_VARS);
  const html = await response.text();
  pages.push(html);
  return { status: response.status, html };
}

async function page(): Promise<string> {
  const init = { headers: { cookie: session.cookie } };
  const response = await gatewayFetch(`${LOCAL}/admin/console/upstreams`, init, ADMIN_VARS);
  const html = await response.text();
  pages.push(html);
  return html;
}

async function whoami(name: string): Promise<Record<string, string>> {
  const { session: mcp } = await initialize(`${LOCAL}/mcp/${name}`, { vars: ADMIN_VARS });
  const call = { name: "whoami", arguments: {} };
  const answer = await request(`${LOCAL}/mcp/${name}`, mcp, "tools/call", call, { vars: ADMIN_VARS });
  return JSON.parse(answer.result.content[0].text);
}

describe("the console's live upstreams", () => {
  beforeAll(async () => {
    session = await signIn({}, LOCAL);
  });
  afterAll(async () => {
    await (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV.delete("live-upstreams");
  });

  it("adds, changes and removes one; the credential goes upstream and never back to a page", async () => {
    const name = `console${crypto.randomUUID().slice(0, 6)}`;
    const added = await submit("/upstreams/live", { name, url: alpha, header: "X-Live-Key", credential: CREDENTIAL });
    expect(added.status).toBe(200);
    const output = `<output id="probe-${name}" class="notice" role="status">`;
    const notice = `${output}Added; probe answered: 2025-11-25, \\d+ tools</output>`;
    expect(added.html).toMatch(new RegExp(notice));
    expect(added.html).toContain(`Remove ${name}`);
    expect(added.html).not.toContain("Remove alpha"); // declared: read-only
    expect((await whoami(name))["x-live-key"]).toBe(CREDENTIAL);

    // Changed with the credential field left empty: the stored one is kept.
    const changed = await submit("/upstreams/live", { name, url: beta, header: "X-Live-Key", credential: "" });
    expect(changed.html).toContain("Changed; probe answered");
    await submit("/upstreams/live", { name, url: alpha, header: "X-Live-Key", credential: "" });
    expect((await whoami(name))["x-live-key"]).toBe(CREDENTIAL);

    const html = await page();
    expect(html).toContain(`id="cfg-${name}"`);
    expect(html).toMatch(/<input id="live-credential" name="credential" type="password" autocomplete="off"\/?>/);

    const removed = await submit(`/upstreams/${name}/remove`, {});
    expect(removed.html).toContain(`<p class="notice" role="status">Removed ${name}</p>`);
    expect(removed.html).not.toContain(`id="cfg-${name}"`);
    for (const text of pages) expect(text).not.toContain(CREDENTIAL);
  });

  it("imports a server.json, first listing what it asks for", async () => {
    const name = `import${crypto.randomUUID().slice(0, 6)}`;
    const remote = {
      type: "streamable-http",
      url: alpha,
      headers: [{ name: "X-Api-Key", description: "API key", isRequired: true, isSecret: true }],
    };
    const server = JSON.stringify({ name: "com.example/wiki", version: "1.0.0", remotes: [remote] });
    const asked = await submit("/upstreams/import", { name, server, values: "" });
    expect(asked.status).toBe(400);
    expect(asked.html).toContain("the server asks for: X-Api-Key (header, required, secret)");
    expect(asked.html).not.toContain(`id="cfg-${name}"`);

    const values = JSON.stringify({ "X-Api-Key": CREDENTIAL });
    const imported = await submit("/upstreams/import", { name, server, values });
    expect(imported.html).toContain("Added; probe answered");
    expect(imported.html).toContain(`id="cfg-${name}"`);
    expect((await whoami(name))["x-api-key"]).toBe(CREDENTIAL);
    await submit(`/upstreams/${name}/remove`, {});
    expect((await submit("/upstreams/import", { name, server: "{", values: "" })).html).toContain("server is not JSON");
    for (const text of pages) expect(text).not.toContain(CREDENTIAL);
  });

  it("shows the admin API's located problems for a bad upstream and stores nothing", async () => {
    const name = `console${crypto.randomUUID().slice(0, 6)}`;
    const fields = { name, url: "http://example.com/mcp", header: "", credential: "" };
    const refused = await submit("/upstreams/live", fields);
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("/url: must be an https:// URL");
    expect(refused.html).not.toContain(`id="cfg-${name}"`);
    const declared = await submit("/upstreams/alpha/remove", {});
    expect(declared.status).toBe(409);
    expect(declared.html).toContain("declared in UPSTREAMS");
  });
});

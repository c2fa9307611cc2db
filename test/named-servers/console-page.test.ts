/**
 * The console's Servers page through the Worker's fetch (features/named-servers/console-page.ts):
 * it lists stored servers; a form built from the catalog's checkboxes creates a server that
 * then serves exactly its picks on /mcp/servers/<name>; a bad form gets the admin API's
 * located problems on the page with the typed values kept; a stale ETag and a missing CSRF
 * token are refused; upstream markup in a description is shown as text. Real SDK upstreams
 * (alpha, beta; the pins fixture for markup) on loopback, the real KV.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { admin, ADMIN_VARS } from "../helpers/admin";
import { initialize, request, type Json } from "../helpers/gateway";
import { consoleGet, consolePost, signIn, type ConsoleSignIn } from "../helpers/console";
import { pinVars, switchVariant } from "../helpers/pins";
import { MARKUP } from "../fixtures/pins-upstream";

let session: ConsoleSignIn;
beforeAll(async () => {
  session = await signIn();
});

const fresh = (base: string) => `${base}-${crypto.randomUUID().slice(0, 8)}`;

function decodeEntities(text: string): string {
  return text
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}

/** The editor's form as a browser would submit it untouched: hidden fields, and each row's index by tool key. */
async function editorForm(
  name: string,
): Promise<{ html: string; fields: Record<string, string>; row: Map<string, number> }> {
  const page = await consoleGet(`/servers/${name}`, session);
  expect(page.status).toBe(200);
  const html = await page.text();
  const hidden = (field: string) => decodeEntities(new RegExp(`name="${field}" value="([^"]*)"`).exec(html)?.[1] ?? "");
  const keys = [...html.matchAll(/name="k(\d+)" value="([^"]+)"/g)];
  const row = new Map(keys.map((m) => [decodeEntities(m[2]!), Number(m[1])]));
  const fields: Record<string, string> = { etag: hidden("etag"), kept: hidden("kept"), rows: hidden("rows") };
  for (const [, index, key] of keys) fields[`k${index}`] = decodeEntities(key!);
  return { html, fields, row };
}

function tokensOf(html: string, id: string): number {
  return Number(new RegExp(`<li id="${id}" data-tokens="(\\d+)"`).exec(html)?.[1] ?? Number.NaN);
}

describe("the Servers page", () => {
  it("creates a server from the catalog's checkboxes that serves exactly its picks, and lists it", async () => {
    const name = fresh("console");
    const { html, fields, row } = await editorForm(name);
    expect(fields.etag).toBe("absent");
    expect(row.has("alpha___echo") && row.has("alpha___add") && row.has("beta___echo")).toBe(true);
    expect(html).toMatch(/<li id="server-cost" data-tokens="\d+">[^<]*<strong>\d+<\/strong> tokens\s+\(0 tools/);
    const echo = row.get("alpha___echo")!;
    const add = row.get("alpha___add")!;
    const saved = await consolePost(
      `/servers/${name}`,
      { ...fields, title: "Console made", roles: "", [`p${echo}`]: "on", [`a${echo}`]: "say", [`p${add}`]: "on" },
      session,
    );
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`/admin/console/servers/${name}`);

    const path = `/mcp/servers/${name}`;
    const opened = await initialize(path, { vars: ADMIN_VARS });
    const listed = await request(path, opened.session, "tools/list", {}, { vars: ADMIN_VARS });
    const names = (listed.result.tools as Json[]).map((t) => t.name).filter((n: string) => !n.startsWith("sys___"));
    expect(names.sort()).toEqual(["alpha___add", "say"]);

    const after = await editorForm(name);
    expect(after.fields.etag).toMatch(/^"/);
    expect(after.html).toMatch(new RegExp(`name="p${echo}" value="on" checked`));
    const server = tokensOf(after.html, "server-cost");
    expect(server).toBeGreaterThan(0);
    expect(server).toBeLessThan(tokensOf(after.html, "catalog-cost"));
    expect(after.html).toContain("An estimate");

    const list = await (await consoleGet("/servers", session)).text();
    expect(list).toMatch(new RegExp(`<tr data-server="${name}">[\\s\\S]*?Console made[\\s\\S]*?</tr>`));
  });

  it("shows a bad form's located problems, keeps what was typed and stores nothing", async () => {
    const name = fresh("bad");
    const { fields, row } = await editorForm(name);
    const echo = row.get("alpha___echo")!;
    const answer = await consolePost(
      `/servers/${name}`,
      { ...fields, catalog: "everything", [`p${echo}`]: "on", [`a${echo}`]: "not___allowed" },
      session,
    );
    expect(answer.status).toBe(400);
    const html = await answer.text();
    const problems = /<div id="server-errors" class="problems" role="alert">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? "";
    expect(problems).toContain("<code>/catalog</code>");
    expect(problems).toContain("<code>/tools/0/alias</code>");
    expect(html).toContain('value="not___allowed"');
    expect((await admin("GET", `/servers/${name}`)).status).toBe(404);
  });

  it("stores back what the form does not edit: descriptions, globs, prompts and resources", async () => {
    const name = fresh("kept");
    const stored = {
      title: "Kept",
      tools: [{ pick: "alpha___echo", alias: "say", description: "Says it." }, "beta___*", "gone___tool"],
      prompts: [{ pick: "alpha___greet", alias: "hello" }],
      resources: ["alpha___alpha://info"],
    };
    expect((await admin("PUT", `/servers/${name}`, stored)).status).toBe(201);
    const { html, fields, row } = await editorForm(name);
    expect(html).toContain("4 other picks");
    // The cost counts the exact pick and every tool the glob picks.
    const betaTools = [...row.keys()].filter((key) => key.startsWith("beta___")).length;
    expect(betaTools).toBeGreaterThan(0);
    expect(html).toMatch(
      new RegExp(`<li id="server-cost"[^>]*>[^<]*<strong>\\d+</strong> tokens\\s+\\(${1 + betaTools} tools`),
    );
    const echo = row.get("alpha___echo")!;
    const untouched = { ...fields, title: "Kept", [`p${echo}`]: "on", [`a${echo}`]: "say" };
    expect((await consolePost(`/servers/${name}`, untouched, session)).status).toBe(303);
    expect(await (await admin("GET", `/servers/${name}`)).json()).toEqual(stored);
  });

  it("refuses a save whose ETag is stale, saying so", async () => {
    const name = fresh("stale");
    const { fields } = await editorForm(name);
    expect((await consolePost(`/servers/${name}`, { ...fields, title: "first", p0: "on" }, session)).status).toBe(303);
    const second = await consolePost(`/servers/${name}`, { ...fields, title: "second", p0: "on" }, session);
    expect(second.status).toBe(412);
    expect(await second.text()).toContain("someone changed this server since the page was loaded");
    expect(((await (await admin("GET", `/servers/${name}`)).json()) as Json).title).toBe("first");
  });

  it("refuses a form without the session's CSRF token, and a visit without a session", async () => {
    const name = fresh("csrf");
    const { fields } = await editorForm(name);
    const forged = await consolePost(`/servers/${name}`, { ...fields, csrf: "0".repeat(64), title: "x" }, session);
    expect(forged.status).toBe(403);
    expect((await admin("GET", `/servers/${name}`)).status).toBe(404);
    const anonymous = await consoleGet("/servers", undefined);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/admin/console/sign-in");
  });

  it("shows markup in an upstream's description as text", async () => {
    const upstream = "sp-markup";
    const vars = pinVars({ name: upstream });
    await switchVariant(upstream, "markup");
    const html = await (await consoleGet(`/servers/${fresh("markup")}`, session, vars)).text();
    expect(html).toContain(`data-key="${upstream}___echo"`);
    expect(html).toContain("&lt;img src=x onerror=&quot;window.__injected=&#39;img&#39;&quot;&gt;");
    expect(html).not.toContain(MARKUP);
    expect(html).not.toMatch(/<script>|<img src=x|<b id="injected">/);
  });
});

/**
 * The admin console's pages through the Worker's fetch: each goes through the admin API
 * (same validation, same errors, shown next to the field they are about), the filter
 * preview answers the console's script with JSON, and text from upstreams and callers is
 * escaped wherever it is shown.
 */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { admin } from "../helpers/admin";
import { consoleGet, consolePost, signIn, type ConsoleSignIn } from "../helpers/console";
import { gatewayFetch } from "../helpers/gateway";
import { MAX_RECORD_READS_PER_PAGE } from "../../src/features/api-keys/api-key-listing";
import { storeKeyWithoutMetadata } from "../helpers/auth";
import { ADMIN_VARS } from "../helpers/admin";

const USER = { userInfo: { login: "ada", type: "PhysicalPerson", bio: "x".repeat(200) } };
const RESULT = { content: [{ type: "text", text: JSON.stringify(USER) }], structuredContent: USER };
const SET = "tools:\n  alpha___get_user:\n    retain: [/userInfo/login]\n";

let session: ConsoleSignIn;
beforeEach(async () => {
  session = await signIn();
  await admin("DELETE", "/filter-sets/console-test");
  await admin("DELETE", "/personas/console-test");
});

describe("the filter preview", () => {
  it("answers the console's script with the output, the bytes saved and the rule that fired", async () => {
    const response = await gatewayFetch(
      "http://gateway.test/admin/console/filters/preview",
      {
        method: "POST",
        headers: {
          origin: "http://gateway.test",
          cookie: session.cookie,
          "x-csrf-token": session.csrf,
          accept: "application/json",
          "content-type": "application/x-www-form-urlencoded;charset=UTF-8",
        },
        body: new URLSearchParams({
          name: "",
          document: SET,
          tool: "alpha___get_user",
          result: JSON.stringify(RESULT),
        }).toString(),
      },
      ADMIN_VARS,
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      rule: "alpha___get_user",
      filtered: { structuredContent: { userInfo: { login: "ada" } } },
    });
    expect(body["bytesSaved"]).toBeGreaterThan(200);
  });

  it("shows the same preview on the page without script", async () => {
    const response = await consolePost(
      "/filters/preview",
      { name: "console-test", "is-new": "1", document: SET, tool: "alpha___get_user", result: JSON.stringify(RESULT) },
      session,
    );
    const html = await response.text();
    expect(html).toMatch(/<output id="preview-rule">alpha___get_user<\/output>/);
    expect(html).toMatch(/<output id="preview-bytes">\d+ bytes saved/);
  });
});

describe("a refused change", () => {
  it("shows the filter set's problems under the document, with their JSON Pointers, and stores nothing", async () => {
    const response = await consolePost(
      "/filters/save",
      { name: "console-test", "is-new": "1", document: "tools:\n  alpha___get_user:\n    retain: [nope]\n" },
      session,
    );
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toMatch(
      /<div id="set-problems" class="problems" role="alert"><p>invalid filter set &quot;console-test&quot;; nothing was stored<\/p><ul><li><code>\/tools\/alpha___get_user\/retain\/0<\/code>/,
    );
    expect((await admin("GET", "/filter-sets/console-test")).status).toBe(404);
  });

  it("keeps a persona's catalog mode when the persona is edited and saved", async () => {
    expect(
      (
        await admin(
          "PUT",
          "/personas/console-test",
          JSON.stringify({ roles: ["r"], allow: ["alpha___*"], catalog: "search" }),
        )
      ).status,
    ).toBe(200);
    // The form had no catalog field, and a save replaced the persona without it.
    const page = await (await consoleGet("/personas?edit=console-test", session)).text();
    expect(page).toMatch(/<option value="search" selected/);
    const saved = await consolePost(
      "/personas/save",
      { name: "console-test", roles: "r, s", allow: "alpha___*", deny: "", catalog: "search" },
      session,
    );
    expect(saved.status).toBeLessThan(400);
    const stored = (await (await admin("GET", "/personas")).json()) as {
      personas: Record<string, { roles: string[]; catalog?: string }>;
    };
    expect(stored.personas["console-test"]).toMatchObject({ roles: ["r", "s"], catalog: "search" });
  });

  it("opens the form for a persona named like a member of every object (constructor) as a new persona", async () => {
    // Looked up without an own-property check, `constructor` found Object itself, and the page answered 500.
    const response = await consoleGet("/personas?edit=constructor", session);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/value="constructor"/);
  });

  it("shows a persona's problem under the field it is about", async () => {
    const response = await consolePost(
      "/personas/save",
      { name: "console-test", roles: "r", allow: "bad pattern!", deny: "" },
      session,
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/<span id="persona-allow-problems" class="problems">\/allow\/0: a pattern/);
  });
});

describe("the API keys page", () => {
  it("links to the next page of keys when the listing has more, so every key can be seen and revoked", async () => {
    const made: string[] = [];
    // Keys without metadata cost every later listing a read: other files share this KV.
    onTestFinished(async () => {
      for (const id of made) await env.GATEWAY_KV.delete(`api-keys/${id}`);
    });
    for (let i = 0; i < MAX_RECORD_READS_PER_PAGE + 5; i++)
      made.push((await storeKeyWithoutMetadata({ principal: `paged-${i}`, roles: ["user"] })).id);
    const shown = new Set<string>();
    let path: string | undefined = "/api-keys";
    for (let page = 0; path !== undefined && page < 20; page++) {
      const html: string = await (await consoleGet(path, session)).text();
      for (const [, id] of html.matchAll(/data-key-id="([0-9a-f]{32})"/g)) shown.add(id!);
      const next: string | undefined = /href="\/admin\/console(\/api-keys\?cursor=[^"]+)">More keys</.exec(html)?.[1];
      path = next?.replaceAll("&amp;", "&");
    }
    // Only the first page was shown, with no sign that more keys existed.
    for (const id of made) expect(shown.has(id), id).toBe(true);
  });
});

describe("the audit query", () => {
  it("shows the admin API's error about a bad time next to the query form", async () => {
    const response = await consoleGet("/audit?from=yesterday-ish", session);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(
      /<div id="audit-errors" class="problems" role="alert"><p>invalid audit query: from and to are ISO 8601 times or ms since the epoch<\/p>/,
    );
  });
});

describe.each([
  ["the plan", "/plan", "/plan", "plan-document", "default: [1, 2]", "default: narrow"],
  ["visibility", "/personas/visibility", "/visibility", "visibility-document", "allow: 5", "allow: [alpha___*]"],
  [
    "the rules",
    "/shaping/rules",
    "/rules",
    "doc-rules",
    "rules: 5",
    "hints:\n  alpha___add: Both numbers must be finite.\n",
  ],
])("%s, edited in the console", (_, action, apiPath, id, bad, good) => {
  beforeEach(async () => {
    await admin("DELETE", apiPath);
  });

  it("shows the admin API's problems under the document, keeps the text, and stores nothing", async () => {
    const response = await consolePost(action, { document: bad }, session);
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toMatch(
      new RegExp(
        `<div id="${id}-problems" class="problems" role="alert"><p>invalid [^<]*; nothing was stored</p><ul><li><code>/`,
      ),
    );
    expect(html).toContain(`aria-invalid="true">${bad}</textarea>`);
    expect((await admin("GET", apiPath)).status).toBe(404);
  });

  it("stores a valid document, and deletes it when saved empty", async () => {
    expect((await consolePost(action, { document: good }, session)).status).toBe(303);
    expect((await admin("GET", apiPath)).status).toBe(200);
    expect((await consolePost(action, { document: "" }, session)).status).toBe(303);
    expect((await admin("GET", apiPath)).status).toBe(404);
  });
});

describe("the probe button", () => {
  it("shows the probe's answer beside the upstream probed", async () => {
    const html = await (await consolePost("/upstreams/alpha/probe", {}, session)).text();
    expect(html).toMatch(
      /<output id="probe-alpha" class="notice" role="status">Answered: 2025-11-25, initialize \d+ ms, ping \d+ ms<\/output>/,
    );
    expect(html).toMatch(/<output id="probe-beta" class="notice"><\/output>/);
  });

  it("shows the admin API's error for an upstream it does not know", async () => {
    const response = await consolePost("/upstreams/nope/probe", {}, session);
    expect(response.status).toBe(404);
    expect(await response.text()).toContain(
      '<div id="upstreams-errors" class="problems" role="alert"><p>no upstream named &quot;nope&quot;</p>',
    );
  });
});

describe("an API key the admin API refuses", () => {
  it("shows each problem under its field and makes no key", async () => {
    const before = ((await (await admin("GET", "/api-keys")).json()) as { apiKeys: unknown[] }).apiKeys.length;
    const response = await consolePost(
      "/api-keys",
      { principal: "", roles: "a", email: "", expiresAt: "2001-01-01T00:00:00Z" },
      session,
    );
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toMatch(
      /<span id="key-principal-problems" class="problems">principal: a string of 1-\d+ characters<\/span>/,
    );
    expect(html).toMatch(/<span id="key-expiresAt-problems" class="problems">expiresAt: a date in the future/);
    expect(((await (await admin("GET", "/api-keys")).json()) as { apiKeys: unknown[] }).apiKeys.length).toBe(before);
  });
});

describe("the Tools page", () => {
  const DOWN = JSON.stringify([{ name: "alpha", url: "http://127.0.0.1:9/mcp" }]);

  it("shows what a persona lists and may call", async () => {
    await admin("PUT", "/personas/console-test", { roles: ["t"], allow: ["alpha___a*"], deny: ["alpha___ask_*"] });
    const html = await (await consoleGet("/tools?persona=console-test&upstream=alpha", session)).text();
    const row = (key: string) =>
      new RegExp(`<tr data-key="${key}" data-listed="(yes|no)">(?:<td>[^]*?</td>){3}<td>(yes|no)</td><td>(yes|no)</td>`)
        .exec(html)
        ?.slice(1, 4);
    expect(row("alpha___add")).toEqual(["yes", "yes", "yes"]);
    expect(row("alpha___ask_user")).toEqual(["no", "no", "no"]);
    expect(row("alpha___echo")).toEqual(["no", "no", "no"]);
    expect(html).toContain("As persona console-test sees alpha");
  });

  it("shows an upstream it cannot list with the reason, in place", async () => {
    const html = await (await consoleGet("/tools", session, { UPSTREAMS: DOWN })).text();
    expect(html).toMatch(
      /<div id="tools-alpha-error" class="problems" role="alert"><p>Listing alpha failed: [^<]+<\/p>/,
    );
  });
});

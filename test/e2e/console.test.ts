/**
 * The admin console in a real browser (the Chromium of @sparticuz/chromium, driven by
 * playwright-core) against the gateway started as README says (`npm start`), with the
 * SDK upstream alpha behind it and API keys turned on. An operator's day: sign in; create
 * a persona and watch the tools it reaches change; write a filter set from a captured
 * result with the live preview, then see a real SDK client get the filtered result;
 * create an API key, call with it, find the call in Audit, revoke it and see the next
 * call refused; upload an icon; see a rug pull on an upstream pinned in enforce on the
 * Pins page and approve it, after which clients list the new definition. The screenshots
 * in README are taken here, at the end (written to docs/console/ with
 * UPDATE_CONSOLE_SCREENSHOTS=1).
 */
import { mkdtemp, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha } from "../fixtures/sdk-upstream.ts";
import { startPinsUpstream } from "../fixtures/pins-upstream.ts";
import { launchChromium, reloadUntil, signIn } from "./console-browser.ts";

const ADMIN_TOKEN = "e2e-console-admin-token-0123456789ab";
/** README's screenshots are rewritten only when asked (UPDATE_CONSOLE_SCREENSHOTS=1): a plain test run leaves the tree clean. */
const README_SCREENSHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "console");
/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
const VIEWER_TIME_ZONE = "Asia/Tokyo";
const FILTER = "tools:\n  alpha___get_user:\n    retain: [/userInfo/login]\n";
/** The upstream pinned in enforce (a label of the pins fixture, which switches variants on POST /<label>/variant/<v>). */
const PINNED = "pinned";

describe("the admin console in Chromium", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let pins: Awaited<ReturnType<typeof startPinsUpstream>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let state: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let apiKey = "";
  let apiKeyId = "";

  const at = (p: string) => `${gateway.url}/admin/console${p}`;
  async function sdkClient(key: string): Promise<Client> {
    const client = new Client({ name: "e2e-console", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    return client;
  }
  /** Presses a form's button and waits for the page it leads to (the old page may hold the same text). */
  async function press(button: string, leadsTo: string): Promise<void> {
    await Promise.all([page.waitForURL(at(leadsTo)), page.getByRole("button", { name: button }).click()]);
  }
  /** What the Tools page, viewed as `persona`, lists: the keys of its rows marked listed. */
  async function listedAs(persona: string): Promise<string[]> {
    await page.goto(at("/tools"));
    await page.getByLabel("View as persona").selectOption(persona);
    await press("View", `/tools?persona=${persona}`);
    await page.getByRole("table", { name: `As persona ${persona} sees alpha` }).waitFor();
    return page
      .locator('tr[data-listed="yes"]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-key") ?? ""));
  }

  beforeAll(async () => {
    [alpha, pins] = await Promise.all([startAlpha(), startPinsUpstream()]);
    state = await mkdtemp(path.join(tmpdir(), "e2e-console-"));
    const vars = {
      UPSTREAMS: [
        { name: "alpha", url: alpha.url },
        { name: PINNED, url: `${pins.url}/${PINNED}/mcp`, pinning: "enforce" },
      ],
      ADMIN_TOKEN,
      AUTH: { apiKeys: true },
    };
    [gateway, browser] = await Promise.all([
      startGateway({ port: await freePort(), vars, persistTo: state }),
      launchChromium(),
    ]);
    // A viewer far from UTC: times must be shown in the viewer's zone.
    context = await browser.newContext({
      viewport: { width: 960, height: 640 },
      locale: "en-US",
      timezoneId: VIEWER_TIME_ZONE,
    });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: gateway.url });
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await Promise.all([alpha?.close(), pins?.close()]);
    if (state) await rm(state, { recursive: true, force: true });
  });

  it("signs in with the admin token, and never puts it in the URL", async () => {
    await page.goto(at("/tools"));
    expect(page.url()).toBe(at("/sign-in"));
    await signIn(page, gateway.url, ADMIN_TOKEN);
    expect(page.url()).toBe(at("/"));
    const cookies = await context.cookies();
    expect(cookies.map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite }))).toEqual([
      { name: "mcpgw_console", httpOnly: true, sameSite: "Strict" },
    ]);
    expect(JSON.stringify(cookies)).not.toContain(ADMIN_TOKEN);
    expect(
      await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })),
    ).not.toContain(ADMIN_TOKEN);
  });

  it("creates a persona, previews what it reaches, and the tool list it reaches changes", async () => {
    await page.goto(at("/personas"));
    await page.getByText("No personas yet").waitFor();
    await page.getByLabel("Persona name").fill("analyst");
    await page.getByLabel("Roles (comma-separated)").fill("analyst");
    await page.getByLabel(/^Allow/).fill("alpha___echo\nalpha___get_user");
    await press("Preview changes", "/personas/preview");
    expect(await page.locator("#reach-gained li").allTextContents()).toEqual(["alpha___echo", "alpha___get_user"]);
    await press("Save persona", "/personas");
    await page.getByRole("rowheader", { name: "analyst" }).waitFor();
    expect(await listedAs("analyst")).toEqual(["alpha___echo", "alpha___get_user"]);

    await page.goto(at("/personas?edit=analyst"));
    await page.getByLabel(/^Allow/).fill("alpha___*");
    await page.getByLabel(/^Deny/).fill("alpha___add\nalpha___echo");
    await press("Preview changes", "/personas/preview");
    expect(await page.locator("#reach-lost li").allTextContents()).toEqual(["alpha___echo"]);
    await press("Save persona", "/personas");
    const after = await listedAs("analyst");
    expect(after).toContain("alpha___whoami");
    expect(after).toContain("alpha___get_user");
    expect(after).not.toContain("alpha___add");
    expect(after).not.toContain("alpha___echo");
  });

  it("creates an API key shown once, with a copy button", async () => {
    await page.goto(at("/api-keys"));
    await page.getByLabel("Principal (who calls with the key)").fill("console-user");
    await page.getByLabel("Roles (comma-separated)").fill("analyst");
    await page.getByRole("button", { name: "Create API key" }).click();
    apiKey = await page.locator("#new-key").inputValue();
    expect(apiKey).toMatch(/^mgw_/);
    apiKeyId = (await page.locator("tr[data-key-id]").first().getAttribute("data-key-id")) ?? "";
    await page.getByRole("button", { name: "Copy key" }).click();
    await page.getByText("Copied to the clipboard").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(apiKey);
    await page.goto(at("/api-keys"));
    expect(await page.content()).not.toContain(apiKey);
  });

  it("writes a filter set from a captured result with the live preview, and a real client gets the filtered result", async () => {
    const client = await sdkClient(apiKey);
    const captured = await client.callTool({ name: "alpha___get_user", arguments: { login: "ada" } });
    await client.close();

    await page.goto(at("/filters"));
    await page.getByText("No filter sets yet").waitFor();
    await page.getByRole("link", { name: "create one" }).click();
    await page.getByLabel("Filter set name").fill("default");
    await page.getByLabel("Filter set (YAML or JSON)").fill(FILTER);
    await page.getByLabel("Tool (its name on /mcp)").fill("alpha___get_user");
    await page.getByLabel("Captured result (a tool result as JSON)").fill(JSON.stringify(captured));
    // The preview answers as the operator types: no button pressed. Once (CI, a loaded
    // 2-core machine) no answer came within 30 s and the cause was not found; if none comes
    // within 10 s, the operator's Enter (the form's submit, the same preview request) asks
    // again, and what the page shows is reported with the failure.
    const answered = page.locator("#preview-bytes:has-text('bytes saved'), #preview-error:not(:empty)").first();
    if (
      !(await answered.waitFor({ timeout: 10_000 }).then(
        () => true,
        () => false,
      ))
    ) {
      await page.locator("#preview-form").evaluate((form) => (form as HTMLFormElement).requestSubmit());
      await answered.waitFor({ timeout: 30_000 }).catch(async (error: unknown) => {
        const shown = await page.locator("#preview-form").evaluate((form) => form.parentElement?.textContent ?? "");
        throw new Error(`the live preview did not answer (page shows: ${shown.slice(0, 500)})`, { cause: error });
      });
    }
    expect(await page.locator("#preview-error").textContent()).toBe("");
    expect(await page.locator("#preview-rule").textContent()).toBe("alpha___get_user");
    const saved = Number(/^(\d+) bytes saved/.exec((await page.locator("#preview-bytes").textContent()) ?? "")?.[1]);
    expect(saved).toBeGreaterThan(100);
    expect(JSON.parse((await page.locator("#preview-output").textContent()) ?? "")).toMatchObject({
      structuredContent: { userInfo: { login: "ada" } },
    });

    await page
      .getByLabel("Filter set (YAML or JSON)")
      .fill("tools:\n  alpha___get_user:\n    retain: [not-a-pointer]\n");
    await press("Save filter set", "/filters/save");
    await page.locator("#set-problems", { hasText: "nothing was stored" }).waitFor();
    expect(await page.locator("#set-problems code").first().textContent()).toMatch(
      /^\/tools\/alpha___get_user\/retain/,
    );

    await page.getByLabel("Filter set (YAML or JSON)").fill(FILTER);
    await press("Save filter set", "/filters/edit/default");

    const again = await sdkClient(apiKey);
    const filtered = await again.callTool({ name: "alpha___get_user", arguments: { login: "ada" } });
    expect(filtered.structuredContent).toEqual({ userInfo: { login: "ada" } });
    await again.close();
  });

  it("shows the key's call in Audit within seconds, then revokes the key and the next call is refused", async () => {
    await page.goto(at("/audit?user=console-user&tool=alpha___get_user"));
    const row = page.locator("tbody tr", { hasText: "alpha___get_user" });
    await reloadUntil(page, async () => (await row.count()) >= 2);
    await row
      .first()
      .getByText(/^Event /)
      .click();
    expect(JSON.parse((await row.first().locator("pre").textContent()) ?? "")).toMatchObject({
      "user.id": "console-user",
      "gen_ai.tool.name": "alpha___get_user",
      "gateway.filter.set": "default",
    });
    const time = row.first().locator("time");
    const iso = (await time.getAttribute("datetime")) ?? "";
    expect(await time.textContent()).toBe(
      new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "medium", timeZone: VIEWER_TIME_ZONE }).format(
        new Date(iso),
      ),
    );

    await page.goto(at("/api-keys"));
    await page.getByRole("button", { name: `Revoke key ${apiKeyId} of console-user` }).click();
    await page.getByText("No API keys yet").waitFor();
    await expect(sdkClient(apiKey)).rejects.toThrow(/401|Unauthorized|invalid/i);
  });

  it("uploads an icon and lists it with its preview", async () => {
    await page.goto(at("/shaping"));
    await page.getByLabel(/^Image file/).setInputFiles({ name: "alpha.png", mimeType: "image/png", buffer: PNG });
    await page.getByRole("button", { name: "Upload icon" }).click();
    const icon = page.getByRole("img", { name: "Icon alpha.png" });
    await icon.waitFor();
    expect(await icon.evaluate((img: HTMLImageElement) => img.decode().then(() => img.naturalWidth))).toBe(1);
  });

  it("shows a rug pull on the pinned upstream on the Pins page; Approve makes the new definition what clients list", async () => {
    const adminFetch = (method: string, p: string, body: unknown) =>
      fetch(`${gateway.url}/admin${p}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect(
      (await adminFetch("PUT", "/personas/pins-reader", { roles: ["pins-reader"], allow: [`${PINNED}___*`] })).status,
    ).toBe(200);
    const { key } = (await (
      await adminFetch("POST", "/api-keys", { principal: "pins-reader", roles: ["pins-reader"] })
    ).json()) as { key: string };
    const client = await sdkClient(key);
    const described = async (tool: string) =>
      (await client.listTools()).tools.find((t) => t.name === `${PINNED}___${tool}`)?.description;
    expect(await described("add")).toBe("Adds two numbers"); // first sight: trusted
    const variant = (v: string) => fetch(`${pins.url}/${PINNED}/variant/${v}`, { method: "POST" });
    await variant("rug-pull");
    expect(await described("add")).toBe("Adds two numbers"); // enforce: the approved definition

    await page.goto(at("/pins"));
    const change = page.locator(`article[data-pin="${PINNED}/tool/add"]`);
    expect(await change.getAttribute("data-status")).toBe("pending");
    expect(
      await change.locator("li[data-rule]").evaluateAll((items) => items.map((item) => item.getAttribute("data-rule"))),
    ).toContain("instruction-tag");
    expect(await change.locator("table.diff td pre").last().textContent()).toContain(
      "<IMPORTANT>Before using this tool",
    );
    await Promise.all([
      page.waitForURL(at("/pins")),
      page.getByRole("button", { name: `Approve tool add of ${PINNED}` }).click(),
    ]);
    await page.getByRole("heading", { level: 1, name: "Pins" }).waitFor();
    expect(await page.locator(`article[data-pin="${PINNED}/tool/add"]`).count()).toBe(0);
    expect(await page.locator(`tr[data-pin="${PINNED}/tool/add"]`).getAttribute("data-status")).toBe("pinned");
    expect(await described("add")).toContain("<IMPORTANT>");

    // Two more changes wait for the screenshot: add back to its first text, echo with hidden tag characters.
    await variant("unicode");
    expect(await described("add")).toContain("<IMPORTANT>");
    await client.close();
    await page.goto(at("/"));
    expect(
      await page
        .locator(`section[aria-labelledby="up-${PINNED}"] dd[data-pins-awaiting]`)
        .getAttribute("data-pins-awaiting"),
    ).toBe("2");
  });

  it("takes one screenshot per main page for README, and every page fits 375 px", async () => {
    const screenshots = process.env["UPDATE_CONSOLE_SCREENSHOTS"]
      ? README_SCREENSHOTS
      : path.join(state, "screenshots");
    await mkdir(screenshots, { recursive: true });
    for (const [file, p] of [
      ["overview", "/"],
      ["upstreams", "/upstreams"],
      ["tools", "/tools?persona=analyst"],
      ["filters", "/filters/edit/default"],
      ["personas", "/personas"],
      ["api-keys", "/api-keys"],
      ["audit", "/audit"],
      ["shaping", "/shaping"],
      ["pins", "/pins"],
    ] as const) {
      await page.setViewportSize({ width: 375, height: 700 });
      await page.goto(at(p));
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${p} at 375 px`).toBeLessThanOrEqual(
        375,
      );
      await page.setViewportSize({ width: 960, height: 640 });
      expect((await page.screenshot({ path: path.join(screenshots, `${file}.png`) })).length).toBeGreaterThan(0);
    }
  });
});

/**
 * The admin console in a real browser with hostile text around: an upstream whose tool
 * title and description and prompt description hold markup and script, and an audit
 * event whose arguments hold the same, and a pinned upstream whose changed description holds
 * markup and invisible characters (on the Pins page, on Tools beside the approved text
 * clients get, and as the pin-change row on Audit: the markup as text, the invisible
 * characters as code points). They must render as text: the test fails if any script
 * runs, any element is injected or the page's CSP reports a violation. The same
 * pages pass axe-core with no serious or critical violation, and every page is reached
 * with the keyboard alone.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha } from "../fixtures/sdk-upstream.ts";
import { HOSTILE_TEXT, startHostile } from "../fixtures/hostile-upstream.ts";
import { MARKUP, startPinsUpstream } from "../fixtures/pins-upstream.ts";
import { launchChromium, reloadUntil, seriousViolations, signIn } from "./console-browser.ts";

const ADMIN_TOKEN = "e2e-console-hostile-admin-token-0123";
const NAV = [
  ["Overview", "/"],
  ["Upstreams", "/upstreams"],
  ["Tools", "/tools"],
  ["Filters", "/filters"],
  ["Personas", "/personas"],
  ["API keys", "/api-keys"],
  ["Audit", "/audit"],
  ["Shaping", "/shaping"],
  ["Pins", "/pins"],
] as const;
/** A label of the pins fixture, pinned in enforce, whose echo tool changes to the `markup` variant. */
const PINNED = "pinned-hostile";
const MAX_TABS = 60;

/** What the page did that hostile text could have made it do. */
type Harm = { injected: unknown; violations: string[]; elements: number; dialogs: string[] };

describe("the admin console with hostile text", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let hostile: Awaited<ReturnType<typeof startHostile>>;
  let pins: Awaited<ReturnType<typeof startPinsUpstream>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let state: string;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];
  const at = (p: string) => `${gateway.url}/admin/console${p}`;

  async function harm(): Promise<Harm> {
    const seen = await page.evaluate(() => ({
      injected: (window as unknown as { __injected?: unknown }).__injected,
      violations: (window as unknown as { __violations: string[] }).__violations,
      elements: document.querySelectorAll('#injected, img[src="x"], script:not([src])').length,
    }));
    return { ...seen, dialogs };
  }

  beforeAll(async () => {
    [alpha, hostile, pins] = await Promise.all([startAlpha(), startHostile(), startPinsUpstream()]);
    state = await mkdtemp(path.join(tmpdir(), "e2e-console-hostile-"));
    const vars = {
      UPSTREAMS: [
        { name: "alpha", url: alpha.url },
        { name: "hostile", url: hostile.url },
        { name: PINNED, url: `${pins.url}/${PINNED}/mcp`, pinning: "enforce" },
      ],
      ADMIN_TOKEN,
    };
    [gateway, browser] = await Promise.all([
      startGateway({ port: await freePort(), vars, persistTo: state }),
      launchChromium(),
    ]);
    const admin = (method: string, p: string, body: unknown) =>
      fetch(`${gateway.url}/admin${p}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await admin("PUT", "/personas/reader", { roles: ["reader"], allow: ["hostile___*"] })).status).toBe(200);

    const client = new Client({ name: "e2e-console-hostile", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    await client.callTool({ name: "hostile___render_me", arguments: { note: HOSTILE_TEXT } });
    await client.listTools(); // pins every upstream's tools on first sight
    await fetch(`${pins.url}/${PINNED}/variant/markup`, { method: "POST" });
    await client.listTools(); // the pinned upstream's echo now holds markup and invisible characters: a pending change
    await client.close();

    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    await context.addInitScript(() => {
      const w = window as unknown as { __violations: string[] };
      w.__violations = [];
      document.addEventListener("securitypolicyviolation", (event) =>
        w.__violations.push(`${event.violatedDirective}: ${event.blockedURI}`),
      );
    });
    page = await context.newPage();
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await signIn(page, gateway.url, ADMIN_TOKEN);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await Promise.all([alpha?.close(), hostile?.close(), pins?.close()]);
    if (state) await rm(state, { recursive: true, force: true });
  });

  it("shows the upstream's hostile title and descriptions as text, on Tools and as a persona sees them", async () => {
    for (const p of ["/tools", "/tools?persona=reader"]) {
      await page.goto(at(p));
      expect(await harm()).toEqual({ injected: undefined, violations: [], elements: 0, dialogs: [] });
      const row = page.locator('tr[data-key="hostile___render_me"]');
      expect(await row.locator("strong").textContent()).toBe(`Title ${HOSTILE_TEXT}`);
      expect(await row.textContent()).toContain(`Description ${HOSTILE_TEXT}`);
      expect(await page.locator('tr[data-key="hostile___hostile_prompt"]').textContent()).toContain(
        `Prompt ${HOSTILE_TEXT}`,
      );
    }
  });

  it("shows an audit event's hostile arguments as text", async () => {
    await page.goto(at("/audit?tool=hostile___render_me"));
    const row = page.locator("tbody tr", { hasText: "hostile___render_me" });
    await reloadUntil(page, async () => (await row.count()) > 0);
    await row
      .first()
      .getByText(/^Event /)
      .click();
    const event = JSON.parse((await row.first().locator("pre").textContent()) ?? "") as Record<string, unknown>;
    expect(event["gen_ai.tool.call.arguments"]).toEqual({ note: HOSTILE_TEXT });
    expect(await harm()).toEqual({ injected: undefined, violations: [], elements: 0, dialogs: [] });
  });

  it("shows a pinned upstream's hostile change on the Pins page as text, its invisible characters as code points", async () => {
    await page.goto(at("/pins"));
    expect(await harm()).toEqual({ injected: undefined, violations: [], elements: 0, dialogs: [] });
    const change = page.locator(`article[data-pin="${PINNED}/tool/echo"]`);
    const after = (await change.locator("table.diff td pre").last().textContent()) ?? "";
    expect(after).toContain(MARKUP);
    expect(after).toContain("zero[U+200B]width [U+202E]reversed");
    expect(after).not.toMatch(/[\u200B\u202E]/);
    expect(await change.locator("mark.invisible").count()).toBe(2);
    expect(await page.locator('tr[data-pin="hostile/tool/render_me"]').textContent()).toContain(
      `Title ${HOSTILE_TEXT} — Description ${HOSTILE_TEXT}`,
    );
  });

  it("shows the pinned upstream's held change on Tools beside the text clients get, as text", async () => {
    await page.goto(at(`/tools?upstream=${PINNED}`));
    expect(await harm()).toEqual({ injected: undefined, violations: [], elements: 0, dialogs: [] });
    const row = page.locator(`tr[data-key="${PINNED}___echo"]`);
    expect(await row.locator(".served").textContent()).toBe("Clients get the approved definition: Echoes its text");
    const held = (await row.locator(".held-change").textContent()) ?? "";
    expect(held).toContain("change pending: held, not served");
    expect(held).toContain(MARKUP);
    expect(held).toContain("zero[U+200B]width [U+202E]reversed");
    expect(held).not.toMatch(/[\u200B\u202E]/);
  });

  it("shows the pin change on Audit as a row of its own, with its findings' severities, as text", async () => {
    await page.goto(at(`/audit?upstream=${PINNED}`));
    const row = page.locator('tr.pin-event[data-pin-status="pending"]');
    await reloadUntil(page, async () => (await row.count()) > 0);
    expect(await harm()).toEqual({ injected: undefined, violations: [], elements: 0, dialogs: [] });
    expect(await row.first().locator(".badge.bad").first().textContent()).toBe("pending (enforce)");
    expect(await row.first().locator('.severities [data-severity="high"]').textContent()).toMatch(/^\d+ high$/);
    expect(await row.first().locator(".badge.ok").count()).toBe(0);
    const findings = await row.first().locator("li[data-rule]").allTextContents();
    expect(findings).toContain("high zero-width at /description: U+200B");
  });

  it.each([...NAV.map(([, p]) => p), "/filters/new", "/personas?edit=reader"])(
    "%s has no serious or critical accessibility violation",
    async (p) => {
      await page.goto(at(p));
      expect(await seriousViolations(page)).toEqual([]);
    },
  );

  it("reaches every page with the keyboard alone, starting with the skip link", async () => {
    await page.goto(at("/"));
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    for (const [name, p] of NAV.slice(1)) {
      await page.goto(at("/"));
      let tabs = 0;
      while ((await page.evaluate(() => document.activeElement?.textContent ?? "")) !== name) {
        if (++tabs > MAX_TABS) throw new Error(`no link named ${name} within ${MAX_TABS} presses of Tab`);
        await page.keyboard.press("Tab");
      }
      expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe("none");
      await Promise.all([page.waitForURL(at(p)), page.keyboard.press("Enter")]);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(name);
    }
  });

  it("views the tools as a persona with the keyboard alone", async () => {
    await page.goto(at("/tools"));
    await page.getByLabel("View as persona").focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("View");
    await Promise.all([page.waitForURL(at("/tools?persona=reader")), page.keyboard.press("Enter")]);
    expect(
      await page
        .locator('tr[data-listed="yes"]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-key"))),
    ).toEqual(["hostile___render_me", "hostile___hostile_prompt"]);
  });
});

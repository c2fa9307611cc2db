/**
 * What the console's browser tests share: the real Chromium that ships inside the
 * @sparticuz/chromium package driven by playwright-core (no browser download), signing
 * in through the form as a person would, axe-core run inside the page, and waiting for a
 * page to show what a background job (the audit Queue) has yet to deliver.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser, type Page } from "playwright-core";

const require = createRequire(import.meta.url);
const RELOAD_INTERVAL_MS = 300;

/** Launches the packaged Chromium, headless. */
export async function launchChromium(): Promise<Browser> {
  return playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
}

/** Opens the console, is sent to sign-in, and signs in with the admin token. */
export async function signIn(page: Page, gatewayUrl: string, adminToken: string): Promise<void> {
  await page.goto(`${gatewayUrl}/admin/console/`);
  await page.getByLabel("Admin token").fill(adminToken);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}

/** The serious and critical accessibility violations axe-core finds on the page. */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string; targets: string[] }[]> {
  const source = await readFile(require.resolve("axe-core/axe.min.js"), "utf8");
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) does not apply to it.
  await page.evaluate(source);
  const found = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run: (
            context: unknown,
            options: unknown,
          ) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(" ")),
    }));
  });
  return found.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

/**
 * Reloads `page` until `shows()` is true, or fails after `timeoutMs`: for what reaches the
 * page through a background job (an audit event goes through the Queue first).
 */
export async function reloadUntil(page: Page, shows: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await shows())) {
    if (Date.now() > deadline) throw new Error(`the page did not show it within ${timeoutMs} ms: ${page.url()}`);
    await page.waitForTimeout(RELOAD_INTERVAL_MS); // polling: nothing announces the Queue's delivery to a page
    await page.reload();
  }
}

/**
 * What an operator scanning the console sees of a rug pull (test/fixtures/pins-upstream.ts,
 * a real SDK upstream whose `add` gains an <IMPORTANT> instruction after approval), through
 * the Worker's fetch with the real audit Queue and R2: the Audit page shows the pin change
 * as a row of its own kind with its findings' severities, never a green "success" call;
 * the Tools page shows the text clients are served (the approved one, under enforce) and
 * the held change beside it. Upstream text stays text.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { admin } from "../helpers/admin";
import { consoleGet, signIn, type ConsoleSignIn } from "../helpers/console";
import type { Json, Vars } from "../helpers/gateway";
import { listedThenChanged as changed, pinClient, pinVars, tool } from "../helpers/pins";
import { MARKUP } from "../fixtures/pins-upstream";

/** The Queue consumer writes on its own schedule: the page is asked until the event shows, at most this long. */
const CONSUMER_DEADLINE_MS = 15_000;
const POLL_MS = 100;

let session: ConsoleSignIn;
beforeAll(async () => {
  session = await signIn();
});

async function pendingFindings(name: string, vars: Vars, toolName: string): Promise<Json[]> {
  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  return pins.definitions.find((d: Json) => d.kind === "tool" && d.name === toolName).pending.findings;
}

/** The row of `key` on the Tools page. */
async function toolsRow(name: string, vars: Vars, key: string): Promise<string> {
  const html = await (await consoleGet(`/tools?upstream=${name}`, session, vars)).text();
  const row = new RegExp(`<tr data-key="${key}"[^]*?</tr>`).exec(html)?.[0];
  if (!row) throw new Error(`no row ${key} on the Tools page`);
  return row;
}

function servedOf(row: string): string {
  return /<div class="served" data-served="(?:yes|no)">([\s\S]*?)<\/div>/.exec(row)?.[1] ?? "";
}

/** The Audit page's pin-event row of `name`'s tool `add`, once the consumer has written it. */
async function pinRow(name: string, vars: Vars): Promise<{ html: string; row: string }> {
  const deadline = Date.now() + CONSUMER_DEADLINE_MS;
  for (;;) {
    const html = await (await consoleGet(`/audit?range=15m&upstream=${name}`, session, vars)).text();
    const row = /<tr class="pin-event"[^>]*data-pin-status="pending"[\s\S]*?<\/tr>/.exec(html)?.[0];
    if (row) return { html, row };
    if (Date.now() > deadline) throw new Error(`no pin-change row for ${name} on the Audit page:\n${html}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

describe("the Audit page", () => {
  it("shows a rug pull as a pin-change row with its findings' severities, not a green success", async () => {
    const name = "cav-audit";
    const { vars } = await changed(name, "rug-pull");
    const findings = await pendingFindings(name, vars, "add");
    const high = findings.filter((f) => f.severity === "high").length;
    expect(high).toBeGreaterThanOrEqual(3);
    const { html, row } = await pinRow(name, vars);
    expect(row).toContain('data-kind="pin-change"');
    expect(row).toMatch(/<strong>Pin changed<\/strong>: tool <code>add<\/code>/);
    expect(row).toContain('<span class="badge bad">pending (enforce)</span>');
    expect(row).toContain(`<span class="badge severity-high" data-severity="high">${high} high</span>`);
    expect(row).not.toContain("badge ok");
    expect(row).not.toMatch(/>success</);
    const finding = '<li data-rule="instruction-tag"><span class="badge severity-high">high</span> instruction-tag at ';
    expect(row).toContain(`${finding}<code>/description</code>: <code class="match">&lt;IMPORTANT&gt;</code></li>`);
    expect(html).not.toContain("<IMPORTANT>");
  });
});

describe("the Tools page", () => {
  it("shows the approved text clients get under enforce, and the held change with its findings apart", async () => {
    const name = "cav-tools";
    const { vars, client } = await changed(name, "rug-pull");
    expect(tool(await client.tools(), "add").description).toBe("Adds two numbers");
    const high = (await pendingFindings(name, vars, "add")).filter((f) => f.severity === "high").length;
    const row = await toolsRow(name, vars, `${name}___add`);
    expect(row).toContain('data-listed="yes"');
    expect(servedOf(row)).toBe('<span class="muted">Clients get the approved definition: </span>Adds two numbers');
    const held = '<div class="held-change" data-pin-change="pending">';
    expect(row).toContain(`${held}<span class="badge bad">change pending: held, not served</span>`);
    expect(row).toContain(`<span class="badge severity-high" data-severity="high">${high} high</span>`);
    expect(row).toContain("The upstream now says: </span>Adds two numbers. &lt;IMPORTANT&gt;Before using this tool");
    expect(servedOf(await toolsRow(name, vars, `${name}___echo`))).toBe("Echoes its text");
  });

  it("says a definition never approved is served to no one, under enforce with approveNew", async () => {
    const name = "cav-tools-held";
    const vars = pinVars({ name, pinning: "enforce", approveNew: true });
    await (await pinClient(`/mcp/${name}`, vars)).tools();
    const row = await toolsRow(name, vars, `${name}___add`);
    expect(row).toContain('data-listed="no"');
    expect(servedOf(row)).toContain("Clients get nothing: this definition is held until an operator approves it.");
    expect(row).toContain('<span class="badge bad">held, not served until approved</span>');
  });

  it("shows a change under warn as served without approval", async () => {
    const name = "cav-tools-warn";
    const { vars } = await changed(name, "rug-pull", "warn");
    const row = await toolsRow(name, vars, `${name}___add`);
    expect(servedOf(row)).toContain("Clients get: </span>Adds two numbers. &lt;IMPORTANT&gt;");
    expect(row).toContain('<span class="badge bad">change pending: served without approval (warn)</span>');
  });

  it("shows hostile upstream text in a held change as text, its invisible characters as code points", async () => {
    const name = "cav-tools-markup";
    const { vars } = await changed(name, "markup");
    const html = await (await consoleGet(`/tools?upstream=${name}`, session, vars)).text();
    const row = await toolsRow(name, vars, `${name}___echo`);
    expect(servedOf(row)).toContain("Echoes its text");
    expect(row).toContain("&lt;img src=x onerror=&quot;window.__injected=&#39;img&#39;&quot;&gt;");
    expect(row).toContain('zero<mark class="invisible" title="characters a reader does not see">[U+200B]</mark>width');
    expect(html).not.toContain(MARKUP);
    expect(html).not.toMatch(/<script>|<img src=x|<b id="injected">|[\u200B\u202E]/);
  });
});

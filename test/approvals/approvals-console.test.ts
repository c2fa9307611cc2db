/**
 * The console's Approvals page through the Worker: a held call listed with its tool, caller,
 * rule, roles and arguments (shown as text, a secret's value replaced), approved from the
 * page as the operator, after which the call runs once; a decision the API refuses is shown.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { admin } from "../helpers/admin";
import { consoleGet, consolePost, signIn, type ConsoleSignIn } from "../helpers/console";
import { modern } from "../helpers/modern";
import type { Json } from "../helpers/gateway";

const RULE = { name: "ship", action: "approve", approval: { roles: ["release"], holdSeconds: 90 }, tools: ["echo"] };
let session: ConsoleSignIn;

beforeAll(async () => {
  session = await signIn();
});
afterEach(async () => {
  await admin("DELETE", "/guardrails");
});

const echo = (args: Json): Promise<Json> =>
  modern("/mcp", "tools/call", { name: "alpha___echo", arguments: args }, { vars: { FILTER_CACHE_TTL_MS: "0" } });

describe("the Approvals page", () => {
  it("lists a held call as text and approves it as the operator; the call then runs once", async () => {
    expect((await admin("PUT", "/guardrails", { rules: [RULE] })).status).toBe(200);
    const args = { text: "<b>ship</b> v2", password: "hunter2" };
    const held = await echo(args);
    expect(held.result.isError).toBe(true);
    const id = /\/approvals\/([0-9a-f]{64})/.exec(held.result.content[0].text)![1]!;

    const html = await (await consoleGet("/approvals", session)).text();
    expect(html).toMatch(/<a[^>]*href="\/admin\/console\/approvals"[^>]*>Approvals<\/a>/);
    expect(html).toContain("<code>alpha___echo</code>");
    expect(html).toContain("rule ship");
    expect(html).toContain("<td>anonymous</td>");
    expect(html).toContain("<td>release</td>");
    expect(html).toContain("&lt;b&gt;ship&lt;/b&gt; v2");
    expect(html).not.toContain("<b>ship</b>");
    expect(html).not.toContain("hunter2");
    expect(html).toContain(`action="/admin/console/approvals/${id}"`);

    const decided = await consolePost(`/approvals/${id}`, { decision: "approve" }, session);
    expect(decided.status).toBe(303);
    // No longer waiting (calls other files of the suite hold may still be listed: one runtime, one KV).
    expect(await (await consoleGet("/approvals", session)).text()).not.toContain(`/admin/console/approvals/${id}"`);
    // A second decision is refused by the API, and the page says why.
    const again = await consolePost(`/approvals/${id}`, { decision: "deny" }, session);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("this call was already approved by (operator)");

    expect((await echo(args)).result.content[0].text).toBe("alpha: <b>ship</b> v2");
    expect((await echo(args)).result.isError).toBe(true);
  });
});

/**
 * The console's Guardrails page through the Worker: the document saved through the form
 * (the admin API's problems shown under it, the text kept), and the preview of the stored
 * rules on a sample, its output shown as text.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { admin } from "../helpers/admin";
import { consoleGet, consolePost, signIn, type ConsoleSignIn } from "../helpers/console";

let session: ConsoleSignIn;

beforeAll(async () => {
  session = await signIn();
});
// Before and after: the suite shares one KV, and a rule saved here (a redact rule on every
// tool) would otherwise stay for the next file.
beforeEach(async () => {
  await admin("DELETE", "/guardrails");
});
afterEach(async () => {
  await admin("DELETE", "/guardrails");
});

describe("the Guardrails page", () => {
  it("is in the console's navigation", async () => {
    const html = await (await consoleGet("/guardrails", session)).text();
    expect(html).toContain('<textarea id="guardrails-document"');
    expect(html).toMatch(/<a[^>]*href="\/admin\/console\/guardrails"[^>]*>Guardrails<\/a>/);
  });

  it("shows the problems of a refused document under it and keeps the text", async () => {
    const bad = "rules:\n  - name: x\n    action: shred\n    detectors: [personal]\n";
    const response = await consolePost("/guardrails", { document: bad }, session);
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toContain("invalid guardrails document; nothing was stored");
    expect(html).toContain("<code>/rules/0/action</code>");
    expect(html).toContain(`aria-invalid="true">${bad}</textarea>`);
    expect((await admin("GET", "/guardrails")).status).toBe(404);
  });

  it("saves a document, and previews it on a sample with the output as text", async () => {
    const document = "rules:\n  - name: pii\n    action: redact\n    detectors: [personal, instructions]\n";
    expect((await consolePost("/guardrails", { document }, session)).status).toBe(303);
    const sample = JSON.stringify({ note: "<b>mail</b> ada@example.com" });
    const html = await (
      await consolePost(
        "/guardrails/preview",
        { upstream: "alpha", tool: "echo", persona: "", on: "result", sample },
        session,
      )
    ).text();
    expect(html).toContain("<li>pii (redact): email ×1</li>");
    expect(html).toContain("&lt;b&gt;mail&lt;/b&gt; [redacted: email]");
    expect(html).not.toContain("<b>mail</b>");
  });
});

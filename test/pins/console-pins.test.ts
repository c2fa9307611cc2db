/**
 * The console's Pins page through the Worker's fetch, over a real SDK upstream that
 * changes its definitions (test/fixtures/pins-upstream.ts): what it shows per upstream
 * (mode, definitions, pending changes with the API's diff and findings, the last Cron
 * run), Approve and Reject by the digest shown, a stale approval refused with the API's
 * 409 shown next to the change, Forget, the CSRF check on every change, and upstream text
 * (markup, invisible Unicode) shown as text. The Overview counts pending pin changes.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { admin } from "../helpers/admin";
import { consoleGet, consolePost, signIn, type ConsoleSignIn } from "../helpers/console";
import type { Json, Vars } from "../helpers/gateway";
import { listedThenChanged as changed, pinClient, pinVars, switchVariant, tool } from "../helpers/pins";
import { MARKUP } from "../fixtures/pins-upstream";

let session: ConsoleSignIn;
beforeAll(async () => {
  session = await signIn();
});

async function pinOf(name: string, vars: Vars, tool = "add"): Promise<Json> {
  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  return pins.definitions.find((d: Json) => d.kind === "tool" && d.name === tool);
}

async function pinsPage(vars: Vars): Promise<string> {
  const response = await consoleGet("/pins", session, vars);
  expect(response.status).toBe(200);
  return response.text();
}

/** The article of a pending change on the page. */
function changeOf(html: string, pin: string): string {
  const found = new RegExp(`<article class="card change" id="([^"]+)" data-pin="${pin}"[^]*?</article>`).exec(html);
  if (!found) throw new Error(`no pending change ${pin} on the page`);
  return found[0];
}

function decide(
  vars: Vars,
  name: string,
  verdict: string,
  digest: string,
  fields: Record<string, string> = {},
  options: { origin?: string } = {},
) {
  return consolePost(
    "/pins/decide",
    { upstream: name, kind: "tool", name: "add", digest, verdict, ...fields },
    session,
    { vars, ...options },
  );
}

describe("the Pins page", () => {
  it("shows the mode, the pending change with the API's diff and its findings, and the pinned definitions", async () => {
    const name = "cp-render";
    const { vars } = await changed(name, "rug-pull");
    const pin = await pinOf(name, vars);
    const html = await pinsPage(vars);
    expect(html).toContain(`<h2 id="pins-0-title">${name}</h2>`);
    expect(html).toContain("enforce: clients keep the approved definition until a change is approved");
    const change = changeOf(html, `${name}/tool/add`);
    expect(change).toContain('data-status="pending"');
    expect(change).toContain(`<input type="hidden" name="digest" value="${pin.pending.digest}"/>`);
    expect(change).toContain(`<code class="digest">${pin.pending.digest}</code>`);
    expect(change).toContain(`<code class="digest">${pin.approved.digest}</code>`);
    expect(change).toMatch(
      /<li data-rule="instruction-tag"><span class="badge severity-high">high<\/span> instruction-tag at <code>\/description<\/code>: <code class="match">&lt;IMPORTANT&gt;<\/code><\/li>/,
    );
    expect(change).toMatch(
      /<td><code>\/description<\/code><\/td><td>changed<\/td><td><pre>Adds two numbers<\/pre><\/td><td><pre>Adds two numbers\. &lt;IMPORTANT&gt;Before using this tool/,
    );
    expect(change).toMatch(
      /<button type="submit" name="verdict" value="approve" aria-label="Approve tool add of cp-render"[^>]*>Approve<\/button>/,
    );
    expect(change).toMatch(
      /<button type="submit" name="verdict" value="reject" class="danger" aria-label="Reject tool add of cp-render"[^>]*>Reject<\/button>/,
    );
    // Pinned definitions, each with a Forget button; add shows its approved description.
    expect(html).toMatch(
      new RegExp(
        `<tr data-pin="${name}/tool/echo" data-status="pinned"><td>tool</td><td><code>echo</code></td><td>pinned</td><td>Echoes its text</td>`,
      ),
    );
    expect(html).toMatch(
      new RegExp(
        `<tr data-pin="${name}/tool/add" data-status="pending"><td>tool</td><td><code>add</code></td><td>pending</td><td>Adds two numbers</td>`,
      ),
    );
    expect(html).toContain(`aria-label="Forget tool echo of ${name}"`);
    expect(html).not.toContain("<IMPORTANT>");
  });

  it("approves the change by the digest shown, and clients list the new definition", async () => {
    const name = "cp-approve";
    const { vars, client } = await changed(name, "rug-pull");
    expect(tool(await client.tools(), "add").description).toBe("Adds two numbers");
    const pin = await pinOf(name, vars);
    const response = await decide(vars, name, "approve", pin.pending.digest);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/admin/console/pins");
    const after = await pinOf(name, vars);
    expect(after.status).toBe("pinned");
    expect(after.approved.digest).toBe(pin.pending.digest);
    expect(tool(await client.tools(), "add").description).toContain("<IMPORTANT>");
    expect(await pinsPage(vars)).not.toContain(`data-pin="${name}/tool/add" data-status="pending"`);
  });

  it("refuses an approval of a version older than the upstream's, shows the API's 409 next to the change, and approves nothing", async () => {
    const name = "cp-stale";
    const { vars, client } = await changed(name, "rug-pull");
    const seen = (await pinOf(name, vars)).pending.digest;
    await switchVariant(name, "schema"); // the upstream changes add again after the operator loaded the page
    await client.tools();
    const current = (await pinOf(name, vars)).pending.digest;
    expect(current).not.toBe(seen);

    const response = await decide(vars, name, "approve", seen);
    expect(response.status).toBe(409);
    const change = changeOf(await response.text(), `${name}/tool/add`);
    expect(change).toMatch(
      /<div id="pins-0-change-\d+-result" class="problems" role="alert"><p>Not approved: the upstream changed this definition after the page was loaded[^<]*reload the page[^<]*The admin API said: [^<]*is not the version upstream &quot;cp-stale&quot; serves now/,
    );
    expect(change).toContain('<a href="/admin/console/pins">Reload the Pins page</a>');
    expect(change).toContain(`name="digest" value="${current}"`);
    const after = await pinOf(name, vars);
    expect(after.status).toBe("pending");
    expect(after.approved.definition.description).toBe("Adds two numbers");
    expect(tool(await client.tools(), "add").description).toBe("Adds two numbers");
  });

  it("rejects the change by digest: clients keep the approved definition", async () => {
    const name = "cp-reject";
    const { vars, client } = await changed(name, "rug-pull");
    const pin = await pinOf(name, vars);
    expect((await decide(vars, name, "reject", pin.pending.digest)).status).toBe(303);
    expect((await pinOf(name, vars)).status).toBe("rejected");
    expect(tool(await client.tools(), "add").description).toBe("Adds two numbers");
    expect(changeOf(await pinsPage(vars), `${name}/tool/add`)).toContain('data-status="rejected"');
  });

  it("forgets a definition, and all of an upstream's", async () => {
    const name = "cp-forget";
    const { vars } = await changed(name, "rug-pull");
    expect(
      (await consolePost("/pins/forget", { upstream: name, kind: "tool", name: "echo" }, session, { vars })).status,
    ).toBe(303);
    expect(await pinOf(name, vars, "echo")).toBeUndefined();
    expect(await pinOf(name, vars, "add")).toBeDefined();
    expect((await consolePost(`/pins/forget-all?upstream=${name}`, {}, session, { vars })).status).toBe(303);
    expect(await pinsPage(vars)).toContain("No pins yet — pins appear when an upstream&#39;s tools are first listed.");
  });

  it("shows the API's error next to a definition it cannot forget", async () => {
    const name = "cp-forget-missing";
    const { vars } = await changed(name, "base");
    const response = await consolePost("/pins/forget", { upstream: name, kind: "prompt", name: "nope" }, session, {
      vars,
    });
    expect(response.status).toBe(404);
    expect(await response.text()).toContain(
      '<div id="pins-errors" class="problems" role="alert"><p>no prompt &quot;nope&quot; is pinned for upstream &quot;cp-forget-missing&quot;</p>',
    );
  });

  it.each([
    ["without the CSRF token", { csrf: "" }, {}],
    ["from another origin", {}, { origin: "https://evil.example" }],
  ])("refuses a decision %s and decides nothing", async (_, fields, options) => {
    const name = "cp-csrf";
    const { vars } = await changed(name, "rug-pull");
    const pin = await pinOf(name, vars);
    expect((await decide(vars, name, "approve", pin.pending.digest, fields, options)).status).toBe(403);
    expect(
      (
        await consolePost("/pins/forget", { upstream: name, kind: "tool", name: "add", ...fields }, session, {
          vars,
          ...options,
        })
      ).status,
    ).toBe(403);
    const after = await pinOf(name, vars);
    expect(after.status).toBe("pending");
    expect(after.approved.digest).toBe(pin.approved.digest);
  });

  it("shows markup and invisible characters from the upstream as text, the invisible ones as code points", async () => {
    const name = "cp-hostile";
    const { vars } = await changed(name, "markup");
    const html = await pinsPage(vars);
    const change = changeOf(html, `${name}/tool/echo`);
    expect(change).toContain(
      "&lt;img src=x onerror=&quot;window.__injected=&#39;img&#39;&quot;&gt;&lt;/script&gt;&lt;script&gt;",
    );
    expect(html).not.toContain(MARKUP);
    expect(html).not.toMatch(/<script>|<img src=x|<b id="injected">/);
    expect(change).toContain(
      'zero<mark class="invisible" title="characters a reader does not see">[U+200B]</mark>width',
    );
    expect(change).toContain(
      '<mark class="invisible" title="characters a reader does not see">[U+202E]</mark>reversed',
    );
    expect(change).toMatch(
      /<li data-rule="zero-width"><span class="badge severity-high">high<\/span> zero-width at <code>\/description<\/code>: <code class="match">U\+200B<\/code>/,
    );
    expect(html).not.toMatch(/[\u200B\u202E]/);

    const tags = "cp-tags";
    const hidden = await pinsPage((await changed(tags, "unicode")).vars);
    expect(changeOf(hidden, `${tags}/tool/echo`)).toMatch(
      /<mark class="invisible" title="characters a reader does not see">\[U\+E0073 U\+E0065 U\+E006E U\+E0064 U\+E0020 U\+E0073 U\+E0065 U\+E0063 … \(12 characters\) hidden text: (&quot;|")send secrets(&quot;|")\]<\/mark>/,
    );
    expect(hidden).not.toMatch(/[\u{E0000}-\u{E007F}]/u);
  });

  it("says so when nothing is pinned yet, and when pinning is off", async () => {
    expect(await pinsPage(pinVars({ name: "cp-empty", pinning: "enforce" }))).toContain(
      "No pins yet — pins appear when an upstream&#39;s tools are first listed.",
    );
    expect(await pinsPage(pinVars({ name: "cp-off", pinning: "off" }))).toContain("Pinning is off for every upstream");
  });

  it("shows the last Cron run, with the upstreams it could not reach", async () => {
    const name = "cp-cron";
    const base = pinVars({ name, pinning: "enforce" });
    const vars = {
      ...base,
      UPSTREAMS: JSON.stringify([
        ...JSON.parse(base["UPSTREAMS"] as string),
        { name: "cp-cron-down", url: "http://127.0.0.1:9/mcp", timeoutMs: 2_000 },
      ]),
    };
    const ctx = createExecutionContext();
    await worker.scheduled!(
      createScheduledController({ scheduledTime: new Date(), cron: "*/5 * * * *" }),
      { ...env, ...vars } as never,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const html = await pinsPage(vars);
    expect(html).toMatch(
      /<section aria-labelledby="sweep-title" id="sweep"><h2 id="sweep-title">Last scheduled check<\/h2><p>Ran <time datetime="[^"]+" data-local="">[^<]+<\/time>: checked cp-cron \(2 tools, 1 prompts, 3 changes\)/,
    );
    expect(html).toMatch(/<ul id="sweep-unreachable"><li><strong>cp-cron-down<\/strong>: [^<]+<\/li><\/ul>/);
  });
});

describe("the Tools page", () => {
  /** Listed, then the Pin cell, of the row of `key` on the Tools page. */
  function rowOf(html: string, key: string): string[] | undefined {
    return new RegExp(
      `<tr data-key="${key}" data-listed="(?:yes|no)">(?:<td>[^]*?</td>){3}<td>(yes|no)</td><td>([^]*?)</td>`,
    )
      .exec(html)
      ?.slice(1, 3);
  }

  it("shows where each pin stands, and a definition held under enforce as not listed", async () => {
    const name = "cp-tools-held";
    const vars = pinVars({ name, pinning: "enforce", approveNew: true });
    const client = await pinClient(`/mcp/${name}`, vars);
    expect((await client.tools()).map((t) => t.name)).toEqual(["sys___read_payload"]); // every first sight is held: clients see none of the upstream's
    const html = await (await consoleGet(`/tools?upstream=${name}`, session, vars)).text();
    expect(rowOf(html, `${name}___add`)).toEqual(["no", '<a href="/admin/console/pins">held (enforce)</a>']);
    expect(rowOf(html, `${name}___echo`)).toEqual(["no", '<a href="/admin/console/pins">held (enforce)</a>']);
  });

  it("shows a pending change under warn as still listed, and a definition no list has shown yet", async () => {
    const name = "cp-tools-warn";
    const { vars } = await changed(name, "rug-pull", "warn");
    await switchVariant(name, "new-tool");
    const html = await (await consoleGet(`/tools?upstream=${name}`, session, vars)).text();
    expect(rowOf(html, `${name}___add`)).toEqual(["yes", '<a href="/admin/console/pins">pending (warn)</a>']);
    expect(rowOf(html, `${name}___echo`)).toEqual(["yes", '<a href="/admin/console/pins">pinned (warn)</a>']);
    expect(rowOf(html, `${name}___notes`)).toEqual(["yes", '<a href="/admin/console/pins">not seen yet</a>']);
  });
});

describe("the Overview", () => {
  it("counts each upstream's pin changes awaiting approval, with a link to them", async () => {
    const name = "cp-overview";
    const { vars } = await changed(name, "rug-pull");
    const html = await (await consoleGet("/", session, vars)).text();
    expect(html).toContain(
      `<dt>Pin changes awaiting approval</dt><dd data-pins-awaiting="1"><a href="/admin/console/pins#pinned-${name}">1 (enforce): review them</a></dd>`,
    );
    const off = await (await consoleGet("/", session, pinVars({ name: "cp-overview-off", pinning: "off" }))).text();
    expect(off).toContain('<dd data-pins-awaiting="off">pinning off</dd>');
  });
});

/** @jsxRuntime classic */
/** @jsx h */
/**
 * The console's part of live upstreams, on its Upstreams page (admin/console/upstreams.tsx):
 * a form that adds or changes one (`PUT /admin/upstreams/<name>`, probed on save), one that
 * imports an MCP Registry server.json (`POST /admin/upstreams/<name>/import`), and a
 * Remove button on each live upstream's card. The credential field is write-only: a
 * password input that is never filled back; left empty, a stored credential is kept.
 */
import { h } from "../../admin/console/jsx";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf, type ApiAnswer } from "../../admin/console/admin-client";
import { statusOf, type renderPage } from "../../admin/console/render";
import type { Need } from "./registry-import";
import { CsrfField, href, PostButton } from "../../admin/console/layout";

/** What the page shows after a save or a removal, beside the upstream it concerns. */
export type LiveNotice = { name: string; ok: boolean; text: string };
type Page = (c: ConsoleContext, notice?: LiveNotice, status?: Parameters<typeof renderPage>[4]) => Promise<Response>;

/** The form that adds or changes a live upstream. */
export function LiveUpstreamForm({ csrf }: { csrf: string }) {
  return (
    <form method="post" action={href("/upstreams/live")} class="stack" aria-labelledby="live-upstream-title">
      <h2 id="live-upstream-title">Add or change a live upstream</h2>
      <CsrfField csrf={csrf} />
      <label for="live-name">Name</label>
      <input id="live-name" name="name" required />
      <label for="live-url">URL (https; http only to loopback under npm start)</label>
      <input id="live-url" name="url" type="url" required />
      <label for="live-header">Credential header (empty: none)</label>
      <input id="live-header" name="header" placeholder="Authorization" />
      <label for="live-credential">Credential (write-only; empty keeps the stored one)</label>
      <input id="live-credential" name="credential" type="password" autocomplete="off" />
      <button type="submit">Save and probe</button>
    </form>
  );
}

/** The form that imports an MCP Registry server.json as a live upstream. */
export function ImportServerForm({ csrf }: { csrf: string }) {
  return (
    <form method="post" action={href("/upstreams/import")} class="stack" aria-labelledby="import-server-title">
      <h2 id="import-server-title">Import a server.json (MCP Registry)</h2>
      <CsrfField csrf={csrf} />
      <label for="import-name">Name</label>
      <input id="import-name" name="name" required />
      <label for="import-server">server.json</label>
      <textarea id="import-server" name="server" rows={8} required></textarea>
      <label for="import-values">Values it asks for, as JSON (empty: the page lists what it asks for)</label>
      <textarea id="import-values" name="values" rows={3} autocomplete="off"></textarea>
      <button type="submit">Import and probe</button>
    </form>
  );
}

/** The Remove button of a live upstream's card. */
export function RemoveLiveUpstream({ name, csrf }: { name: string; csrf: string }) {
  return (
    <PostButton action={href(`/upstreams/${encodeURIComponent(name)}/remove`)} csrf={csrf} danger>
      Remove {name}
    </PostButton>
  );
}

function probeText(probe: unknown): string {
  if (typeof probe === "string") return probe;
  const report = probe as { ok?: boolean; tools?: number; protocolVersion?: string; stage?: string; error?: string };
  if (report.ok) return `probe answered: ${report.protocolVersion}, ${report.tools} tools`;
  return `probe failed at ${report.stage}: ${report.error}`;
}

function needsText(body: unknown): string {
  const needs = (body as { needs?: readonly Need[] }).needs;
  if (!needs || needs.length === 0) return "";
  const listed = needs.map((n) => {
    const what = [n.kind, n.isRequired && "required", n.isSecret && "secret"].filter(Boolean).join(", ");
    return `${n.name} (${what})`;
  });
  return `; the server asks for: ${listed.join(", ")}`;
}

/** Shows what an admin API write answered: the probe's outcome, or the error and its problems. */
function shown(c: ConsoleContext, page: Page, name: string, answer: ApiAnswer): Promise<Response> {
  if (!answer.ok) {
    const { error, problems } = errorOf(answer);
    const text = [error, ...problems.map((p) => `${p.path || "/"}: ${p.message}`)].join("; ") + needsText(answer.body);
    return page(c, { name, ok: false, text }, statusOf(answer.status));
  }
  const result = answer.body as { created?: boolean; probe?: unknown };
  return page(c, { name, ok: true, text: `${result.created ? "Added" : "Changed"}; ${probeText(result.probe)}` });
}

async function importServer(c: ConsoleContext, page: Page): Promise<Response> {
  const name = c.var.form.get("name").trim();
  const raw = { server: c.var.form.get("server"), values: c.var.form.get("values").trim() || "{}" };
  const parsed: Record<string, unknown> = {};
  for (const [field, text] of Object.entries(raw)) {
    try {
      parsed[field] = JSON.parse(text);
    } catch {
      return page(c, { name, ok: false, text: `${field} is not JSON; nothing was stored` }, 400);
    }
  }
  const answer = await c.var.call("POST", `/upstreams/${encodeURIComponent(name)}/import`, JSON.stringify(parsed));
  return shown(c, page, name, answer);
}

async function save(c: ConsoleContext, page: Page): Promise<Response> {
  const form = c.var.form;
  const name = form.get("name").trim();
  const header = form.get("header").trim();
  const value = form.get("credential");
  const body: Record<string, unknown> = { url: form.get("url").trim() };
  if (value !== "") {
    const credential: Record<string, unknown> = { value, header: header || "Authorization" };
    // Another header than Authorization carries the value as it is (no "Bearer").
    if (header !== "" && header.toLowerCase() !== "authorization") credential["scheme"] = "";
    body["credential"] = credential;
  } else if (header !== "") body["credential"] = { sealed: true, header };
  return shown(c, page, name, await c.var.call("PUT", `/upstreams/${encodeURIComponent(name)}`, JSON.stringify(body)));
}

/** Adds the save and remove routes of the Upstreams page; `page` renders it with a notice. */
export function registerLiveUpstreamConsole(app: ConsoleApp, page: Page): void {
  app.post("/upstreams/live", (c) => save(c, page));
  app.post("/upstreams/import", (c) => importServer(c, page));
  app.post("/upstreams/:name/remove", async (c) => {
    const name = c.req.param("name");
    const answer = await c.var.call("DELETE", `/upstreams/${encodeURIComponent(name)}`);
    const notice = { name, ok: answer.ok, text: answer.ok ? `Removed ${name}` : errorOf(answer).error };
    return page(c, notice, answer.ok ? 200 : statusOf(answer.status));
  });
}

/** @jsxRuntime classic */
/** @jsx h */
/**
 * The console's part of live upstreams, on its Upstreams page (admin/console/upstreams.tsx):
 * a form that adds or changes one (`PUT /admin/upstreams/<name>`, probed on save) and a
 * Remove button on each live upstream's card. The credential field is write-only: a
 * password input that is never filled back; left empty, a stored credential is kept.
 */
import { h } from "../../admin/console/jsx";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import { statusOf, type renderPage } from "../../admin/console/render";
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
  const answer = await c.var.call("PUT", `/upstreams/${encodeURIComponent(name)}`, JSON.stringify(body));
  if (!answer.ok) {
    const { error, problems } = errorOf(answer);
    const text = [error, ...problems.map((p) => `${p.path || "/"}: ${p.message}`)].join("; ");
    return page(c, { name, ok: false, text }, statusOf(answer.status));
  }
  const result = answer.body as { created?: boolean; probe?: unknown };
  return page(c, { name, ok: true, text: `${result.created ? "Added" : "Changed"}; ${probeText(result.probe)}` });
}

/** Adds the save and remove routes of the Upstreams page; `page` renders it with a notice. */
export function registerLiveUpstreamConsole(app: ConsoleApp, page: Page): void {
  app.post("/upstreams/live", (c) => save(c, page));
  app.post("/upstreams/:name/remove", async (c) => {
    const name = c.req.param("name");
    const answer = await c.var.call("DELETE", `/upstreams/${encodeURIComponent(name)}`);
    const notice = { name, ok: answer.ok, text: answer.ok ? `Removed ${name}` : errorOf(answer).error };
    return page(c, notice, answer.ok ? 200 : statusOf(answer.status));
  });
}

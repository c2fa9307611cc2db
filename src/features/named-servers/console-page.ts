/**
 * The console's Servers page (loaded on demand, with the rest of named servers): the stored
 * servers, and one server's editor: title, instructions, catalog mode, roles and a checkbox
 * (with alias and title) for each tool the catalog lists, beside the estimated tokens of the
 * server's tools/list and of the full catalog's. A save is the admin API's checked write
 * (`PUT /admin/servers/<name>` with the ETag the page was read with); its problems are shown
 * above the form, the submitted choices kept. Written with hono's `html` template, which
 * escapes every value (tool names and descriptions are upstream text), inside the console's
 * frame that the main module passes in (console-routes.ts).
 */
import { html } from "hono/html";
import type { ConsoleContext } from "../../admin/console/context";
import type { ApiProblem, errorOf } from "../../admin/console/admin-client";
import type { renderPage, statusOf } from "../../admin/console/render";
import type { href } from "../../admin/console/layout";
import { isObject, type JsonObject } from "../../core/jsonrpc";
import type { CatalogEntry, UpstreamCatalog } from "../catalog/console-catalog";
import { CATALOG_MODES } from "../../context/grant";
import { documentOf, draftOf, keptOf, listCosts, type Draft, type ListCost } from "./console-form";

/** The console's frame and the catalog, from the main module. */
export type ServersFrame = {
  readonly render: typeof renderPage;
  readonly statusOf: typeof statusOf;
  readonly href: typeof href;
  readonly errorOf: typeof errorOf;
  /** admin-client.ts's ETag of a document absent when the page was read. */
  readonly absentEtag: string;
  /** filters/apply-filter.ts's estimate of JSON bytes per token. */
  readonly bytesPerToken: number;
  readonly catalog: (c: ConsoleContext) => Promise<readonly UpstreamCatalog[]>;
};

type Failure = { error: string; problems?: readonly ApiProblem[]; status: number };

function problemsBlock(id: string, failure: Failure | undefined) {
  if (!failure) return html`<div id="${id}"></div>`;
  const items = (failure.problems ?? []).map(
    (p) => html`<li><code>${p.path === "" ? "(the document)" : p.path}</code>: ${p.message}</li>`,
  );
  return html`<div id="${id}" class="problems" role="alert"><p>${failure.error}</p>${
    items.length > 0 ? html`<ul>${items}</ul>` : ""
  }</div>`;
}

/** `GET /servers`: the stored servers, and a field to open one (new or existing) by name. */
export async function serversPage(c: ConsoleContext, frame: ServersFrame): Promise<Response> {
  const listed = await c.var.call("GET", "/servers");
  const body = isObject(listed.body) ? listed.body : {};
  const servers = (listed.ok && Array.isArray(body["servers"]) ? body["servers"] : []).filter(isObject);
  const failure = listed.ok ? undefined : { ...frame.errorOf(listed), status: listed.status };
  const rows = servers.map((server) => {
    const name = String(server["name"]);
    const roles = Array.isArray(server["roles"]) ? server["roles"].join(", ") : "whoever may use /mcp";
    return html`<tr data-server="${name}">
  <td><a href="${frame.href(`/servers/${encodeURIComponent(name)}`)}">${name}</a></td>
  <td>${String(server["title"] ?? "")}</td><td>${roles}</td><td>${String(server["tools"] ?? 0)}</td>
  <td><code>${String(server["url"] ?? "")}</code></td>
</tr>`;
  });
  const content = html`<p class="muted">
  Named servers: a team's own URL serving its picks of the catalog, renamed where it says (docs/console.md#servers).
</p>
${problemsBlock("servers-errors", failure)}
${
  rows.length === 0
    ? html`<p id="servers-empty">No named server yet.</p>`
    : html`<table id="servers"><thead><tr>
  <th scope="col">Name</th><th scope="col">Title</th><th scope="col">Roles</th><th scope="col">Tools</th>
  <th scope="col">URL</th></tr></thead><tbody>${rows}</tbody></table>`
}
<form method="get" action="${frame.href("/servers")}" class="row">
  <label for="open-server">Server name (new or existing)</label>
  <input id="open-server" name="open" required pattern="[A-Za-z0-9][A-Za-z0-9_\\-]{0,63}" />
  <button type="submit">Open</button>
</form>`;
  return frame.render(c, "Servers", "/servers", content, failure ? frame.statusOf(failure.status) : 200);
}

function costLine(id: string, label: string, cost: ListCost) {
  return html`<li id="${id}" data-tokens="${cost.tokens}">${label}: about <strong>${cost.tokens}</strong> tokens
  (${cost.tools} tools, ${cost.bytes} bytes)</li>`;
}

function toolRows(draft: Draft) {
  return draft.rows.map(
    (row, i) => html`<tr data-key="${row.entry.key}">
  <td><input type="hidden" name="k${i}" value="${row.entry.key}" />
    <input type="checkbox" id="p${i}" name="p${i}" value="on" ${row.picked ? html`checked` : ""} />
    <label for="p${i}"><code>${row.entry.key}</code></label></td>
  <td>${row.entry.title ?? ""}<br /><span class="muted">${row.entry.description ?? ""}</span></td>
  <td><input name="a${i}" value="${row.alias}" aria-label="alias of ${row.entry.key}" /></td>
  <td><input name="t${i}" value="${row.title}" aria-label="title of ${row.entry.key}" /></td>
</tr>`,
  );
}

function catalogOptions(current: string) {
  const modes = ["", ...CATALOG_MODES];
  return modes.map(
    (mode) =>
      html`<option value="${mode}" ${mode === current ? html`selected` : ""}>
  ${mode || "(as the persona says)"}</option>`,
  );
}

function catalogProblems(catalogs: readonly UpstreamCatalog[]) {
  return catalogs
    .filter((catalog) => catalog.error)
    .map((catalog) => html`<p class="problems" role="alert">Listing ${catalog.upstream} failed: ${catalog.error}</p>`);
}

function keptNote(others: number) {
  const what = "other picks (globs, prompts, resources, tools not listed now) are kept as they are";
  return html`<p class="muted" id="server-kept">${others} ${what}.</p>`;
}

/** The editor of the server `name`: `draft` (stored or submitted), the ETag to save with, what went wrong. */
async function editor(
  c: ConsoleContext,
  frame: ServersFrame,
  name: string,
  shown: { document: JsonObject; etag: string; failure?: Failure; kept?: Draft["kept"] },
  catalogs: readonly UpstreamCatalog[],
): Promise<Response> {
  const tools: CatalogEntry[] = catalogs.flatMap((catalog) => catalog.entries.filter((e) => e.kind === "tool"));
  const draft = draftOf(shown.document, tools);
  const kept = shown.kept ?? draft.kept;
  const costs = listCosts({ ...draft, kept }, frame.bytesPerToken);
  const doc = shown.document;
  const text = (field: string) => (typeof doc[field] === "string" ? (doc[field] as string) : "");
  const roles = Array.isArray(doc["roles"]) ? doc["roles"].map(String).join(", ") : "";
  const others = kept.tools.length + kept.prompts.length + kept.resources.length;
  const content = html`<p><a href="${frame.href("/servers")}">All servers</a></p>
${problemsBlock("server-errors", shown.failure)}
${catalogProblems(catalogs)}
<section aria-labelledby="server-cost-title"><h2 id="server-cost-title">What its tools/list costs</h2>
<ul>${costLine("server-cost", "This server", costs.server)}
${costLine("catalog-cost", "The full catalog", costs.catalog)}</ul>
<p class="muted">An estimate: the bytes of the upstreams' own definitions it would serve,
at ${frame.bytesPerToken} bytes a token, before shaping, pins and the catalog mode
(compact and search list less).</p></section>
<form method="post" action="${frame.href(`/servers/${encodeURIComponent(name)}`)}" class="stack">
  <input type="hidden" name="csrf" value="${c.var.session.csrf}" />
  <input type="hidden" name="etag" value="${shown.etag}" />
  <input type="hidden" name="kept" value="${JSON.stringify(kept)}" />
  <input type="hidden" name="rows" value="${draft.rows.length}" />
  <label for="server-title">Title</label><input id="server-title" name="title" value="${text("title")}" />
  <label for="server-instructions">Instructions</label>
  <textarea id="server-instructions" name="instructions" rows="3">${text("instructions")}</textarea>
  <label for="server-catalog">Catalog mode</label>
  <select id="server-catalog" name="catalog">${catalogOptions(text("catalog"))}</select>
  <label for="server-roles">Roles (comma-separated; empty: whoever may use /mcp)</label>
  <input id="server-roles" name="roles" value="${roles}" />
  <table id="server-tools"><thead><tr><th scope="col">Pick</th><th scope="col">Upstream's title and description</th>
    <th scope="col">Alias</th><th scope="col">Title</th></tr></thead><tbody>${toolRows(draft)}</tbody></table>
  ${others > 0 ? keptNote(others) : ""}
  <button type="submit">Save</button>
</form>`;
  const status = shown.failure ? frame.statusOf(shown.failure.status) : 200;
  return frame.render(c, `Server ${name}`, "/servers", content, status);
}

/** `GET /servers/<name>`: the stored server (or a new one) in the editor. */
export async function serverEditor(c: ConsoleContext, frame: ServersFrame, name: string): Promise<Response> {
  const path = `/servers/${encodeURIComponent(name)}`;
  const [stored, catalogs] = await Promise.all([c.var.call("GET", path), frame.catalog(c)]);
  if (stored.status === 404) return editor(c, frame, name, { document: {}, etag: frame.absentEtag }, catalogs);
  const etag = stored.headers.get("etag") ?? "";
  if (stored.ok && isObject(stored.body)) return editor(c, frame, name, { document: stored.body, etag }, catalogs);
  const failure = stored.ok
    ? {
        error: "the stored document does not parse; fix it with the admin API (PUT /admin/servers/<name>)",
        status: 500,
      }
    : { ...frame.errorOf(stored), status: stored.status };
  return editor(c, frame, name, { document: {}, etag, failure }, catalogs);
}

/** `POST /servers/<name>`: the form's document through the checked write; back to the editor either way. */
export async function saveServerFromConsole(c: ConsoleContext, frame: ServersFrame, name: string): Promise<Response> {
  const get = (field: string) => c.var.form.get(field);
  const kept = keptOf(get("kept"));
  const catalogs = frame.catalog(c);
  if (typeof kept === "string") {
    return editor(
      c,
      frame,
      name,
      { document: {}, etag: get("etag"), failure: { error: kept, status: 400 } },
      await catalogs,
    );
  }
  const document = documentOf(get, kept);
  const path = `/servers/${encodeURIComponent(name)}`;
  const answer = await c.var.call("PUT", path, JSON.stringify(document), "application/json", get("etag"));
  if (answer.ok) return c.redirect(frame.href(path), 303);
  const failure = { ...frame.errorOf(answer), status: answer.status };
  if (answer.status === 412)
    failure.error = `${failure.error}: someone changed this server since the page was loaded; reload it`;
  return editor(c, frame, name, { document, etag: get("etag"), failure, kept }, await catalogs);
}

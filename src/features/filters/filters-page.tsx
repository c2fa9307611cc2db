/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Filters: the stored filter sets and the plan; a set's editor with the admin API's
 * validation problems shown under the document, and a preview: paste a captured tool
 * result, name the tool, and see the output, the bytes saved and which rule of the set
 * fired (POST /admin/filter-sets/<name>/preview, with the unsaved set). The console's
 * script runs the preview as the operator types; without script the Preview button does.
 */
import { Fragment, h } from "../../admin/console/jsx";
import { parseDocument } from "../../storage/document-store";
import { FILTER_SET_NAME } from "./filter-set";
import { isObject } from "../../core/jsonrpc";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { ABSENT_ETAG, errorOf, type ApiProblem } from "../../admin/console/admin-client";
import { CsrfField, Empty, href, PostButton, Problems } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import {
  DocumentForm,
  explainStale,
  prettyDocument,
  saveDocument,
  type RefusedDocument,
} from "../../admin/console/document-form";
import type { ContentfulStatusCode } from "hono/utils/http-status";

const NEW_SET_TEMPLATE =
  '# A filter set: which parts of each tool\'s result reach the client.\ntools:\n  "<upstream>___<tool>":\n    retain: [/structuredContent/id]\n';
/** The name a preview of a set that has none yet is labelled with. */
const DRAFT_NAME = "draft";

type Editor = {
  name: string;
  /** The ETag the stored set was read with (empty for a new set, or an API without ETags). */
  etag: string;
  isNew: boolean;
  document: string;
  tool: string;
  result: string;
  error?: string | undefined;
  problems?: ApiProblem[] | undefined;
  preview?: { error?: string; rule?: string; bytes?: string; output?: string } | undefined;
};

function FilterEditor({ editor, csrf }: { editor: Editor; csrf: string }) {
  const preview = editor.preview ?? {};
  return (
    <form id="preview-form" method="post" action={href("/filters/preview")} class="stack">
      <CsrfField csrf={csrf} />
      {editor.isNew && <input type="hidden" name="is-new" value="1" />}
      <input type="hidden" name="etag" value={editor.etag} />
      <label for="set-name">Filter set name</label>
      <input
        id="set-name"
        name="name"
        value={editor.name}
        required
        pattern="[A-Za-z0-9_-]{1,64}"
        readonly={!editor.isNew}
        aria-describedby="set-name-hint"
      />
      <span id="set-name-hint" class="muted">
        1-64 letters, digits, - or _; the set named "default" applies wherever the plan names none.
      </span>
      <label for="set-document">Filter set (YAML or JSON)</label>
      <textarea
        id="set-document"
        name="document"
        rows={12}
        aria-describedby="set-problems"
        aria-invalid={editor.error ? "true" : undefined}
      >
        {editor.document}
      </textarea>
      <Problems id="set-problems" error={editor.error} problems={editor.problems} />
      <h2>Preview</h2>
      <label for="preview-tool">Tool (its name on /mcp)</label>
      <input id="preview-tool" name="tool" value={editor.tool} placeholder="alpha___get_user" />
      <label for="preview-result">Captured result (a tool result as JSON)</label>
      <textarea id="preview-result" name="result" rows={8}>
        {editor.result}
      </textarea>
      <div class="row">
        <button type="submit">Preview</button>
        <button type="submit" formaction={href("/filters/save")}>
          Save filter set
        </button>
      </div>
      <div aria-live="polite">
        <p id="preview-error" class="problems">
          {preview.error ?? ""}
        </p>
        <dl>
          <dt>Rule that fired</dt>
          <dd>
            <output id="preview-rule">{preview.rule ?? ""}</output>
          </dd>
          <dt>Bytes saved</dt>
          <dd>
            <output id="preview-bytes">{preview.bytes ?? ""}</output>
          </dd>
        </dl>
        <h3>Filtered result</h3>
        <pre id="preview-output">{preview.output ?? ""}</pre>
      </div>
    </form>
  );
}

/** Runs a preview through the admin API: `{tool, result, set}` for the unsaved set. */
async function runPreview(c: ConsoleContext): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = c.var.form;
  const name = FILTER_SET_NAME.test(form.get("name")) ? form.get("name") : DRAFT_NAME;
  const set = await parseDocument(form.get("document"));
  if (!set.ok)
    return { status: 400, body: { error: "The filter set is not valid JSON or YAML", problems: set.problems } };
  const result = await parseDocument(form.get("result"));
  if (form.get("result").trim() === "" || !result.ok)
    return {
      status: 400,
      body: { error: "Paste a tool result as JSON to preview", problems: result.ok ? [] : result.problems },
    };
  const answer = await c.var.call(
    "POST",
    `/filter-sets/${encodeURIComponent(name)}/preview`,
    JSON.stringify({ tool: form.get("tool"), result: result.value, set: set.value }),
  );
  return { status: answer.status, body: isObject(answer.body) ? answer.body : { error: answer.text } };
}

function editorOf(c: ConsoleContext): Editor {
  const form = c.var.form;
  return {
    name: form.get("name"),
    etag: form.get("etag"),
    isNew: form.get("is-new") === "1",
    document: form.get("document"),
    tool: form.get("tool"),
    result: form.get("result"),
  };
}

function editorPage(
  c: ConsoleContext,
  editor: Editor,
  status: Parameters<typeof renderPage>[4] = 200,
): Promise<Response> {
  const title = editor.isNew ? "New filter set" : `Filter set ${editor.name}`;
  return renderPage(
    c,
    title,
    "/filters",
    <>
      <p>
        <a href={href("/filters")}>All filter sets and the plan</a>
      </p>
      <FilterEditor editor={editor} csrf={c.var.session.csrf} />
      {!editor.isNew && (
        <PostButton
          action={href(`/filters/${encodeURIComponent(editor.name)}/delete`)}
          csrf={c.var.session.csrf}
          etag={editor.etag}
          danger
        >
          Delete filter set {editor.name}
        </PostButton>
      )}
    </>,
    status,
  );
}

/** Adds the Filters pages: list and plan, editor, preview, save, delete. */
export function registerFilters(app: ConsoleApp): void {
  const filtersPage = async (
    c: ConsoleContext,
    refused?: RefusedDocument,
    status: Parameters<typeof renderPage>[4] = 200,
  ) => {
    const [sets, plan] = await Promise.all([c.var.call("GET", "/filter-sets"), c.var.call("GET", "/plan")]);
    const names = (isObject(sets.body) && Array.isArray(sets.body["filterSets"]) ? sets.body["filterSets"] : []).map(
      String,
    );
    const body = (
      <>
        <Problems id="filters-errors" error={sets.ok ? undefined : errorOf(sets).error} />
        <h2>Filter sets</h2>
        {names.length === 0 ? (
          <Empty>
            No filter sets yet — <a href={href("/filters/new")}>create one</a>.
          </Empty>
        ) : (
          <ul>
            {names.map((name) => (
              <li>
                <a href={href(`/filters/edit/${encodeURIComponent(name)}`)}>{name}</a>
              </li>
            ))}
          </ul>
        )}
        <p>
          <a href={href("/filters/new")}>New filter set</a>
        </p>
        <h2>Plan</h2>
        <p class="muted">
          Which set each route or upstream uses; without a plan every call uses the set named "default", if there is
          one.
        </p>
        <DocumentForm
          id="plan-document"
          label="Plan"
          action={href("/plan")}
          csrf={c.var.session.csrf}
          stored={plan}
          refused={refused}
          rows={6}
        />
      </>
    );
    return renderPage(c, "Filters", "/filters", body, status);
  };
  app.get("/filters", (c) => filtersPage(c));

  app.get("/filters/new", (c) =>
    editorPage(c, { name: "", etag: ABSENT_ETAG, isNew: true, document: NEW_SET_TEMPLATE, tool: "", result: "" }),
  );
  app.get("/filters/edit/:name", async (c) => {
    const name = c.req.param("name");
    const answer = await c.var.call("GET", `/filter-sets/${encodeURIComponent(name)}`);
    if (!answer.ok)
      return renderPage(
        c,
        "Filter set",
        "/filters",
        <Problems id="filters-errors" error={errorOf(answer).error} />,
        statusOf(answer.status),
      );
    return editorPage(c, {
      name,
      etag: answer.headers.get("etag") ?? "",
      isNew: false,
      document: prettyDocument(answer.text),
      tool: "",
      result: "",
    });
  });

  app.post("/filters/preview", async (c) => {
    const { status, body } = await runPreview(c);
    if ((c.req.header("accept") ?? "").includes("application/json"))
      return c.json(body, status as ContentfulStatusCode);
    const editor = editorOf(c);
    const problems = Array.isArray(body["problems"]) ? (body["problems"] as ApiProblem[]) : [];
    const bytes =
      typeof body["bytesSaved"] === "number"
        ? `${body["bytesSaved"]} bytes saved (${String(body["bytesBefore"])} → ${String(body["bytesAfter"])})`
        : "";
    const preview = {
      ...(typeof body["error"] === "string"
        ? { error: `${body["error"]}${problems.map((p) => `\n${p.path || "(the document)"}: ${p.message}`).join("")}` }
        : {}),
      rule:
        body["rule"] === null
          ? "none (no rule of the set matches this tool)"
          : `${String(body["rule"] ?? "")}${body["mode"] === "shadow" ? " (shadow: measured, not applied)" : ""}`,
      bytes,
      output: "filtered" in body ? JSON.stringify(body["filtered"], null, 2) : "",
    };
    return editorPage(c, { ...editor, preview });
  });

  app.post("/filters/save", async (c) => {
    const editor = editorOf(c);
    const answer = await c.var.call(
      "PUT",
      `/filter-sets/${encodeURIComponent(editor.name)}`,
      editor.document,
      "application/yaml",
      editor.etag,
    );
    if (!answer.ok) {
      const { error, problems } = errorOf(answer);
      return editorPage(c, { ...editor, error: explainStale(error, answer.status), problems }, statusOf(answer.status));
    }
    return c.redirect(href(`/filters/edit/${encodeURIComponent(editor.name)}`), 303);
  });

  app.post("/filters/:name/delete", async (c) => {
    const answer = await c.var.call(
      "DELETE",
      `/filter-sets/${encodeURIComponent(c.req.param("name"))}`,
      undefined,
      undefined,
      c.var.form.get("etag"),
    );
    if (!answer.ok)
      return renderPage(
        c,
        "Filter set",
        "/filters",
        <Problems id="filters-errors" error={explainStale(errorOf(answer).error, answer.status, "delete")} />,
        statusOf(answer.status),
      );
    return c.redirect(href("/filters"), 303);
  });

  app.post("/plan", async (c) => {
    const saved = await saveDocument(c, "/plan");
    return saved ? filtersPage(c, saved.refused, statusOf(saved.status)) : c.redirect(href("/filters"), 303);
  });
}

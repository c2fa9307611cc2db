/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * The console's Guardrails page: the guardrails document edited as YAML or JSON (the admin
 * API's problems under it, the ETag it was read with carried so a stale save is refused),
 * and a preview: a sample text or JSON value, the call it would be part of (upstream, tool,
 * persona, arguments or result), and what the stored rules make of it (POST
 * /admin/guardrails/preview). Samples and outputs are shown as text, never as markup.
 */
import { Fragment, h } from "../../admin/console/jsx";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import { DocumentForm, saveDocument, type RefusedDocument } from "../../admin/console/document-form";
import { CsrfField, href, Problems } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import { isObject } from "../../core/jsonrpc";

type PreviewForm = { upstream: string; tool: string; persona: string; on: string; sample: string };
type Shown = {
  refused?: RefusedDocument;
  form?: PreviewForm;
  error?: string;
  problems?: { path: string; message: string }[];
  output?: string;
  hits?: string[];
};

const EMPTY_FORM: PreviewForm = { upstream: "", tool: "", persona: "", on: "result", sample: "" };

async function guardrailsPage(
  c: ConsoleContext,
  shown: Shown = {},
  status: Parameters<typeof renderPage>[4] = 200,
): Promise<Response> {
  const stored = await c.var.call("GET", "/guardrails");
  const csrf = c.var.session.csrf;
  const form = shown.form ?? EMPTY_FORM;
  const body = (
    <>
      <p class="muted">
        Rules that read tool calls' arguments and results for secrets, personal data, instructions aimed at the model
        and your own patterns, and redact, block or warn (docs/guardrails.md).
      </p>
      <DocumentForm
        id="guardrails-document"
        label="Guardrails document"
        action={href("/guardrails")}
        csrf={csrf}
        stored={stored}
        refused={shown.refused}
        rows={14}
      />
      <form method="post" action={href("/guardrails/preview")} class="stack" aria-labelledby="guardrails-preview-title">
        <h2 id="guardrails-preview-title">Preview the stored rules</h2>
        <CsrfField csrf={csrf} />
        <label for="preview-upstream">Upstream</label>
        <input id="preview-upstream" name="upstream" value={form.upstream} placeholder="alpha" />
        <label for="preview-tool">Tool (the upstream's own name)</label>
        <input id="preview-tool" name="tool" value={form.tool} placeholder="get_user" />
        <label for="preview-persona">Persona (empty: none)</label>
        <input id="preview-persona" name="persona" value={form.persona} />
        <label for="preview-on">Side of the call</label>
        <select id="preview-on" name="on">
          <option value="result" selected={form.on !== "arguments"}>
            result
          </option>
          <option value="arguments" selected={form.on === "arguments"}>
            arguments
          </option>
        </select>
        <label for="preview-sample">Sample (JSON, or plain text)</label>
        <textarea id="preview-sample" name="sample" rows={6}>
          {form.sample}
        </textarea>
        <Problems id="guardrails-preview-errors" error={shown.error} problems={shown.problems} />
        <button type="submit">Preview</button>
      </form>
      {shown.output !== undefined && (
        <section aria-labelledby="guardrails-output-title">
          <h3 id="guardrails-output-title">What the rules make of it</h3>
          <ul id="guardrails-hits">
            {(shown.hits ?? []).length === 0 ? <li>nothing found</li> : shown.hits!.map((hit) => <li>{hit}</li>)}
          </ul>
          <pre id="guardrails-output">{shown.output}</pre>
        </section>
      )}
    </>
  );
  return renderPage(c, "Guardrails", "/guardrails", body, status);
}

/** The sample as the preview sends it: JSON when it parses, else the text itself. */
function sampleOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Adds the Guardrails page: the document, its save, and the preview. */
export function registerGuardrailsPage(app: ConsoleApp): void {
  app.get("/guardrails", (c) => guardrailsPage(c));

  app.post("/guardrails", async (c) => {
    const saved = await saveDocument(c, "/guardrails");
    if (!saved) return c.redirect(href("/guardrails"), 303);
    return guardrailsPage(c, { refused: saved.refused }, statusOf(saved.status));
  });

  app.post("/guardrails/preview", async (c) => {
    const get = (name: keyof PreviewForm) => c.var.form.get(name);
    const form: PreviewForm = {
      upstream: get("upstream"),
      tool: get("tool"),
      persona: get("persona"),
      on: get("on"),
      sample: get("sample"),
    };
    const request = {
      upstream: form.upstream,
      tool: form.tool,
      on: form.on,
      sample: sampleOf(form.sample),
      ...(form.persona.trim() ? { persona: form.persona.trim() } : {}),
    };
    const answer = await c.var.call("POST", "/guardrails/preview", JSON.stringify(request), "application/json");
    if (!answer.ok || !isObject(answer.body)) {
      const { error, problems } = errorOf(answer);
      return guardrailsPage(c, { form, error, problems }, statusOf(answer.status));
    }
    const hits = (Array.isArray(answer.body["hits"]) ? answer.body["hits"] : [])
      .filter(isObject)
      .map(
        (hit) => `${String(hit["rule"])} (${String(hit["action"])}): ${String(hit["kind"])} ×${String(hit["count"])}`,
      );
    const blocked = answer.body["blocked"];
    const output =
      typeof blocked === "string" ? `blocked by rule "${blocked}"` : JSON.stringify(answer.body["output"], null, 2);
    return guardrailsPage(c, { form, output, hits });
  });
}

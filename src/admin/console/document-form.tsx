/** @jsxRuntime classic */
/** @jsx h */
/**
 * A live-edited KV document (the plan, visibility, icons, overrides, rules) as a form:
 * its text as stored (pretty JSON), or as submitted when the admin API refused it, with
 * the API's problems under it. Saving an empty text deletes the document. The form
 * carries the ETag the document was read with (when the API gives one), so a save made
 * over someone else's newer edit is refused (412) rather than overwriting it; a document
 * absent at load is saved only while it is still absent (`If-None-Match: *`). One form
 * and one save handler for all of them.
 */
import { h } from "./jsx";
import type { ConsoleContext } from "./context";
import { ABSENT_ETAG, errorOf, type ApiAnswer, type ApiProblem } from "./admin-client";
import { CsrfField, Problems } from "./layout";

/**
 * The text of a stored document for editing: pretty JSON, or the text as stored when it is
 * not JSON. `text` is the admin API's answer to a GET, which is JSON whenever the stored
 * text parses (a YAML document written straight into KV included), so only JSON is tried.
 */
export function prettyDocument(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** What a refused save shows again: the submitted text and the API's error. */
export type RefusedDocument = { text: string; error: string; problems: ApiProblem[]; etag: string };

type Props = {
  id: string;
  label: string;
  action: string;
  csrf: string;
  stored: ApiAnswer;
  refused?: RefusedDocument | undefined;
  rows?: number;
};

/** The precondition of a save: the ETag the document was read with, `ABSENT_ETAG` when it was absent (404), else none. */
function loadedEtag(stored: ApiAnswer): string {
  return stored.headers.get("etag") ?? (stored.status === 404 ? ABSENT_ETAG : "");
}

/** The form of one document. */
export function DocumentForm({ id, label, action, csrf, stored, refused, rows = 8 }: Props) {
  return (
    <form method="post" action={action} class="stack">
      <CsrfField csrf={csrf} />
      <input type="hidden" name="etag" value={refused ? refused.etag : loadedEtag(stored)} />
      <label for={id}>{`${label} (YAML or JSON; empty to delete it)`}</label>
      <textarea
        id={id}
        name="document"
        rows={rows}
        aria-describedby={`${id}-problems`}
        aria-invalid={refused ? "true" : undefined}
      >
        {refused ? refused.text : stored.ok ? prettyDocument(stored.text) : ""}
      </textarea>
      <Problems id={`${id}-problems`} error={refused?.error} problems={refused?.problems} />
      <button type="submit">{`Save ${label.toLowerCase()}`}</button>
    </form>
  );
}

/**
 * Saves the submitted document at the admin API's `path` (PUT, or DELETE when empty):
 * undefined when stored, else what to show again.
 */
export async function saveDocument(
  c: ConsoleContext,
  path: string,
): Promise<{ refused: RefusedDocument; status: number } | undefined> {
  const text = c.var.form.get("document");
  const etag = c.var.form.get("etag");
  const answer =
    text.trim() === ""
      ? await c.var.call("DELETE", path, undefined, undefined, etag)
      : await c.var.call("PUT", path, text, "application/yaml", etag);
  if (answer.ok) return undefined;
  const { error, problems } = errorOf(answer);
  return { refused: { text, etag, error: explainStale(error, answer.status), problems }, status: answer.status };
}

/**
 * The admin API's error, with what to do about it when it is a 412 (the document changed
 * since the page was loaded): a refused save keeps the operator's text on screen, a
 * refused delete has none to keep.
 */
export function explainStale(error: string, status: number, change: "save" | "delete" = "save"): string {
  if (status !== 412) return error;
  return change === "save"
    ? `${error} (someone changed it after this page was loaded: your text is kept here; reload the page, then make your change again)`
    : `${error} (someone changed it after this page was loaded: nothing was deleted; reload the page to see their change, then delete it again if you still want to)`;
}

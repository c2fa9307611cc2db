/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Shaping: the icon files the gateway serves (upload with preview, delete) and the three
 * shaping documents (icons, text overrides, rules and hints), each edited as YAML or
 * JSON with the admin API's problems shown under it.
 */
import { Fragment, h } from "../../admin/console/jsx";
import { isObject } from "../../core/jsonrpc";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import { DocumentForm, saveDocument, type RefusedDocument } from "../../admin/console/document-form";
import { CsrfField, Empty, href, PostButton, Problems } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";

const DOCUMENTS = [
  ["icons", "Icons document", "Which icons tools, prompts and resources get (mode, entries of match, kinds, icons)."],
  ["overrides", "Text overrides", "New titles and descriptions per tool or prompt, instructions per upstream."],
  ["rules", "Rules and hints", "Guidance appended to tool results, by tool glob and condition."],
] as const;
type DocumentName = (typeof DOCUMENTS)[number][0];

type Shown = { name?: DocumentName; refused?: RefusedDocument; iconError?: string };

async function shapingPage(
  c: ConsoleContext,
  shown: Shown = {},
  status: Parameters<typeof renderPage>[4] = 200,
): Promise<Response> {
  const [files, ...documents] = await Promise.all([
    c.var.call("GET", "/icons/files"),
    ...DOCUMENTS.map(([name]) => c.var.call("GET", `/${name}`)),
  ]);
  const names = (isObject(files.body) && Array.isArray(files.body["files"]) ? files.body["files"] : []).map(String);
  const csrf = c.var.session.csrf;
  const body = (
    <>
      <h2>Icon files</h2>
      <Problems id="icon-files-errors" error={files.ok ? undefined : errorOf(files).error} />
      {names.length === 0 ? (
        <Empty>No icon files yet — upload one below, then name it in the icons document as {"{ file: <name> }"}.</Empty>
      ) : (
        <ul id="icon-files">
          {names.map((name) => (
            <li class="row">
              <img
                class="icon-preview"
                src={`/icons/${encodeURIComponent(name)}`}
                alt={`Icon ${name}`}
                width={32}
                height={32}
              />
              <code>{name}</code>
              <PostButton
                action={href(`/shaping/icon-files/${encodeURIComponent(name)}/delete`)}
                csrf={csrf}
                danger
                label={`Delete icon file ${name}`}
              >
                Delete
              </PostButton>
            </li>
          ))}
        </ul>
      )}
      <form
        method="post"
        action={href("/shaping/icon-files")}
        enctype="multipart/form-data"
        class="stack"
        aria-labelledby="upload-title"
      >
        <h3 id="upload-title">Upload an icon</h3>
        <CsrfField csrf={csrf} />
        <label for="icon-file">Image file (PNG, JPEG, GIF, WebP, SVG or ICO; at most 1 MiB)</label>
        <input id="icon-file" name="file" type="file" accept="image/*" required aria-describedby="icon-upload-errors" />
        <label for="icon-name">File name served at /icons/&lt;name&gt; (empty: the file's own name)</label>
        <input id="icon-name" name="name" aria-describedby="icon-upload-errors" />
        <Problems id="icon-upload-errors" error={shown.iconError} />
        <button type="submit">Upload icon</button>
      </form>
      {DOCUMENTS.map(([name, title, about], index) => (
        <section aria-labelledby={`doc-${name}-title`}>
          <h2 id={`doc-${name}-title`}>{title}</h2>
          <p class="muted">{about}</p>
          <DocumentForm
            id={`doc-${name}`}
            label={title}
            action={href(`/shaping/${name}`)}
            csrf={csrf}
            stored={documents[index]!}
            refused={shown.name === name ? shown.refused : undefined}
          />
        </section>
      ))}
    </>
  );
  return renderPage(c, "Shaping", "/shaping", body, status);
}

/** Adds the Shaping page: icon files, icons, overrides and rules documents. */
export function registerShaping(app: ConsoleApp): void {
  app.get("/shaping", (c) => shapingPage(c));

  app.post("/shaping/icon-files", async (c) => {
    const file = c.var.form.file("file");
    if (!file || file.size === 0) return shapingPage(c, { iconError: "Choose an image file to upload" }, 400);
    const name = c.var.form.get("name").trim() || file.name;
    const answer = await c.var.call(
      "PUT",
      `/icons/files/${encodeURIComponent(name)}`,
      await file.arrayBuffer(),
      file.type || "application/octet-stream",
    );
    if (!answer.ok) return shapingPage(c, { iconError: errorOf(answer).error }, statusOf(answer.status));
    return c.redirect(href("/shaping"), 303);
  });

  app.post("/shaping/icon-files/:name/delete", async (c) => {
    const answer = await c.var.call("DELETE", `/icons/files/${encodeURIComponent(c.req.param("name"))}`);
    if (!answer.ok) return shapingPage(c, { iconError: errorOf(answer).error }, statusOf(answer.status));
    return c.redirect(href("/shaping"), 303);
  });

  app.post("/shaping/:document", async (c) => {
    const name = DOCUMENTS.find(([known]) => known === c.req.param("document"))?.[0];
    if (!name) return c.notFound();
    const saved = await saveDocument(c, `/${name}`);
    if (!saved) return c.redirect(href("/shaping"), 303);
    return shapingPage(c, { name, refused: saved.refused }, statusOf(saved.status));
  });
}

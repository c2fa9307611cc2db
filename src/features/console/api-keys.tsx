/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * API keys: create one (shown once, with a copy button), list them (never keys or
 * hashes: the admin API has neither to give), revoke one.
 */
import { Fragment, h } from "../../admin/console/jsx";
import { isObject } from "../../core/jsonrpc";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf, type ApiProblem } from "../../admin/console/admin-client";
import { CsrfField, Empty, href, PostButton, Problems, Time, TableHead } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";

type NewKeyForm = { principal: string; email: string; roles: string; expiresAt: string };
type Created = { id: string; key: string; principal: string };

const FIELDS: readonly (readonly [keyof NewKeyForm, string, string])[] = [
  ["principal", "Principal (who calls with the key)", "text"],
  ["email", "Email (optional)", "email"],
  ["roles", "Roles (comma-separated)", "text"],
  ["expiresAt", "Expires (optional, ISO 8601 such as 2027-01-31T00:00:00Z)", "text"],
];

function CreateForm({
  form,
  csrf,
  error,
  problems = [],
}: {
  form: NewKeyForm;
  csrf: string;
  error?: string | undefined;
  problems?: readonly ApiProblem[];
}) {
  return (
    <form method="post" action={href("/api-keys")} class="stack" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create an API key</h2>
      <CsrfField csrf={csrf} />
      {FIELDS.map(([field, label, type]) => {
        const mine = problems.filter((problem) => problem.message.startsWith(`${field}:`));
        return (
          <>
            <label for={`key-${field}`}>{label}</label>
            <input
              id={`key-${field}`}
              name={field}
              type={type}
              value={form[field]}
              required={field === "principal"}
              aria-describedby={`key-${field}-problems`}
              aria-invalid={mine.length > 0 ? "true" : undefined}
            />
            <span id={`key-${field}-problems`} class="problems">
              {mine.map((problem) => problem.message).join("\n")}
            </span>
          </>
        );
      })}
      <Problems
        id="create-key-error"
        error={error}
        problems={problems.filter((problem) => !FIELDS.some(([field]) => problem.message.startsWith(`${field}:`)))}
      />
      <button type="submit">Create API key</button>
    </form>
  );
}

function NewKey({ created }: { created: Created }) {
  return (
    <section class="notice" aria-labelledby="new-key-title">
      <h2 id="new-key-title">New API key for {created.principal}</h2>
      <p>This is the only time the key is shown: copy it now. The gateway keeps only its hash.</p>
      <label for="new-key">API key {created.id}</label>
      <input id="new-key" class="key" value={created.key} readonly />
      <button type="button" data-copy="new-key" data-status="copy-status" hidden>
        Copy key
      </button>
      <span id="copy-status" role="status"></span>
    </section>
  );
}

async function apiKeysPage(
  c: ConsoleContext,
  extra: { created?: Created; form?: NewKeyForm; error?: string; problems?: ApiProblem[]; revokeError?: string } = {},
  status: Parameters<typeof renderPage>[4] = 200,
): Promise<Response> {
  // One page of the listing at a time: `?cursor=` is the admin API's, passed on as it came.
  const from = c.req.query("cursor");
  const answer = await c.var.call("GET", from ? `/api-keys?cursor=${encodeURIComponent(from)}` : "/api-keys");
  const keys = (isObject(answer.body) && Array.isArray(answer.body["apiKeys"]) ? answer.body["apiKeys"] : []).filter(
    isObject,
  );
  const more = isObject(answer.body) && typeof answer.body["cursor"] === "string" ? answer.body["cursor"] : undefined;
  const csrf = c.var.session.csrf;
  const body = (
    <>
      {extra.created && <NewKey created={extra.created} />}
      <Problems id="api-keys-errors" error={extra.revokeError ?? (answer.ok ? undefined : errorOf(answer).error)} />
      <h2>Keys</h2>
      {keys.length === 0 ? (
        <Empty>No API keys yet — create one below.</Empty>
      ) : (
        <table>
          <caption class="muted">Keys the gateway accepts (their ids; keys are never shown again)</caption>
          <TableHead columns={["Id", "Principal", "Email", "Roles", "Created", "Expires", "Revoke"]} />
          <tbody>
            {keys.map((key) => {
              const id = String(key["id"]);
              return (
                <tr data-key-id={id}>
                  <td>
                    <code>{id}</code>
                  </td>
                  <td>{String(key["principal"] ?? "")}</td>
                  <td>{typeof key["email"] === "string" ? key["email"] : ""}</td>
                  <td>{Array.isArray(key["roles"]) ? key["roles"].map(String).join(", ") : ""}</td>
                  <td>
                    <Time iso={typeof key["createdAt"] === "string" ? key["createdAt"] : null} />
                  </td>
                  <td>{typeof key["expiresAt"] === "string" ? <Time iso={key["expiresAt"]} /> : "never"}</td>
                  <td>
                    <PostButton
                      action={href(`/api-keys/${encodeURIComponent(id)}/revoke`)}
                      csrf={csrf}
                      danger
                      label={`Revoke key ${id} of ${String(key["principal"] ?? "")}`}
                    >
                      Revoke
                    </PostButton>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {(more !== undefined || from) && (
        <p class="row" id="api-keys-pages">
          {from && <a href={href("/api-keys")}>First keys</a>}
          {more !== undefined && <a href={href(`/api-keys?cursor=${encodeURIComponent(more)}`)}>More keys</a>}
        </p>
      )}
      <CreateForm
        form={extra.form ?? { principal: "", email: "", roles: "", expiresAt: "" }}
        csrf={csrf}
        error={extra.error}
        problems={extra.problems ?? []}
      />
    </>
  );
  return renderPage(c, "API keys", "/api-keys", body, status);
}

/** Adds the API keys page: list, create (shown once), revoke. */
export function registerApiKeys(app: ConsoleApp): void {
  app.get("/api-keys", (c) => apiKeysPage(c));

  app.post("/api-keys", async (c) => {
    const form: NewKeyForm = {
      principal: c.var.form.get("principal").trim(),
      email: c.var.form.get("email").trim(),
      roles: c.var.form.get("roles"),
      expiresAt: c.var.form.get("expiresAt").trim(),
    };
    const request = {
      principal: form.principal,
      roles: form.roles
        .split(",")
        .map((role) => role.trim())
        .filter((role) => role !== ""),
      ...(form.email ? { email: form.email } : {}),
      ...(form.expiresAt ? { expiresAt: form.expiresAt } : {}),
    };
    const answer = await c.var.call("POST", "/api-keys", JSON.stringify(request));
    if (!answer.ok || !isObject(answer.body))
      return apiKeysPage(c, { form, ...errorOf(answer) }, statusOf(answer.status));
    const created = {
      id: String(answer.body["id"]),
      key: String(answer.body["key"]),
      principal: String(answer.body["principal"]),
    };
    return apiKeysPage(c, { created });
  });

  app.post("/api-keys/:id/revoke", async (c) => {
    const answer = await c.var.call("DELETE", `/api-keys/${encodeURIComponent(c.req.param("id"))}`);
    if (!answer.ok) return apiKeysPage(c, { revokeError: errorOf(answer).error }, statusOf(answer.status));
    return c.redirect(href("/api-keys"), 303);
  });
}

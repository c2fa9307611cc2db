/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * The console's page of client grants (/admin/console/client-grants), over the admin API's
 * /admin/client-grants: who signed in to which client, for what and since when, with a
 * Revoke button per grant; and the live role mapping (/admin/sign-in-roles) as a document.
 * A client's name and id are client-written text: shown escaped, their invisible characters
 * made visible. No token is ever shown (the API has none).
 */
import { Fragment, h } from "../../admin/console/jsx";
import { isObject } from "../../core/jsonrpc";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import { Empty, href, PostButton, Problems, TableHead, Time } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import { Visible } from "../../admin/console/visible-text";
import { DocumentForm, saveDocument, type RefusedDocument } from "../../admin/console/document-form";

const ROLE_MAPPING_ABOUT =
  "Roles signed-in users get by group, email domain or email, in force at their next call: " +
  '{"rules": [{"group": "eng", "roles": ["engineers"]}, {"emailDomain": "example.com", "roles": ["staff"]}]}.';

const text = (value: unknown) => (typeof value === "string" ? value : "");
const list = (value: unknown) => (Array.isArray(value) ? value.map(String).join(" ") : "");

type Shown = { revokeError?: string; refused?: RefusedDocument };

type Status = Parameters<typeof renderPage>[4];

async function grantsPage(c: ConsoleContext, shown: Shown = {}, status: Status = 200): Promise<Response> {
  const from = c.req.query("cursor");
  const [answer, mapping] = await Promise.all([
    c.var.call("GET", from ? `/client-grants?cursor=${encodeURIComponent(from)}` : "/client-grants"),
    c.var.call("GET", "/sign-in-roles"),
  ]);
  const users = (isObject(answer.body) && Array.isArray(answer.body["users"]) ? answer.body["users"] : []).filter(
    isObject,
  );
  const more = isObject(answer.body) && typeof answer.body["cursor"] === "string" ? answer.body["cursor"] : undefined;
  const rows = users.flatMap((user) =>
    (Array.isArray(user["grants"]) ? user["grants"] : []).filter(isObject).map((grant) => ({ user, grant })),
  );
  const listError = answer.ok ? undefined : errorOf(answer).error;
  const csrf = c.var.session.csrf;
  const body = (
    <>
      <Problems id="client-grants-errors" error={shown.revokeError ?? listError} />
      {rows.length === 0 ? (
        <Empty>No user has signed in to a client yet (or client sign-in, AUTH.signIn, is off).</Empty>
      ) : (
        <table>
          <caption class="muted">
            Clients users allowed through the gateway's sign-in; revoking ends the client's tokens at once
          </caption>
          <TableHead columns={["User", "Client", "Resource", "Scope", "Granted", "Expires", "Revoke"]} />
          <tbody>
            {rows.map(({ user, grant }) => {
              const principal = text(user["principal"]);
              const id = text(grant["id"]);
              const query = `principal=${encodeURIComponent(principal)}&grant=${encodeURIComponent(id)}`;
              const action = href(`/client-grants/revoke?${query}`);
              const label = `Revoke the grant of ${principal} to ${text(grant["clientId"])}`;
              return (
                <tr data-grant-id={id}>
                  <td>{text(user["email"]) || principal}</td>
                  <td>
                    <Visible text={text(grant["clientName"]) || text(grant["clientId"])} />
                    <br />
                    <code class="muted">
                      <Visible text={text(grant["clientId"])} />
                    </code>
                  </td>
                  <td>{list(grant["resource"])}</td>
                  <td>{list(grant["scope"])}</td>
                  <td>
                    <Time iso={text(grant["createdAt"]) || null} />
                  </td>
                  <td>{typeof grant["expiresAt"] === "string" ? <Time iso={grant["expiresAt"]} /> : "never"}</td>
                  <td>
                    <PostButton action={action} csrf={csrf} danger label={label}>
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
        <p class="row" id="client-grants-pages">
          {from && <a href={href("/client-grants")}>First users</a>}
          {more !== undefined && <a href={href(`/client-grants?cursor=${encodeURIComponent(more)}`)}>More users</a>}
        </p>
      )}
      <section aria-labelledby="sign-in-roles-title">
        <h2 id="sign-in-roles-title">Role mapping</h2>
        <p class="muted">{ROLE_MAPPING_ABOUT}</p>
        <DocumentForm
          id="sign-in-roles"
          label="Role mapping"
          action={href("/client-grants/roles")}
          csrf={csrf}
          stored={mapping}
          refused={shown.refused}
        />
      </section>
    </>
  );
  return renderPage(c, "Client grants", "/client-grants", body, status);
}

/** Adds the client grants page: list, revoke; the live role mapping document. */
export function registerClientGrants(app: ConsoleApp): void {
  app.get("/client-grants", (c) => grantsPage(c));
  app.post("/client-grants/revoke", async (c) => {
    const principal = encodeURIComponent(c.req.query("principal") ?? "");
    const query = `principal=${principal}&grant=${encodeURIComponent(c.req.query("grant") ?? "")}`;
    const answer = await c.var.call("DELETE", `/client-grants?${query}`);
    if (!answer.ok) return grantsPage(c, { revokeError: errorOf(answer).error }, statusOf(answer.status));
    return c.redirect(href("/client-grants"), 303);
  });
  app.post("/client-grants/roles", async (c) => {
    const saved = await saveDocument(c, "/sign-in-roles");
    if (!saved) return c.redirect(href("/client-grants"), 303);
    return grantsPage(c, { refused: saved.refused }, statusOf(saved.status));
  });
}

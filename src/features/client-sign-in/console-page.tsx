/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * The console's page of client grants (/admin/console/client-grants), over the admin API's
 * /admin/client-grants: who signed in to which client, for what and since when, with a
 * Revoke button per grant. A client's name and id are client-written text: shown escaped,
 * their invisible characters made visible. No token is ever shown (the API has none).
 */
import { Fragment, h } from "../../admin/console/jsx";
import { isObject } from "../../core/jsonrpc";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import { Empty, href, PostButton, Problems, TableHead, Time } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import { Visible } from "../../admin/console/visible-text";

const text = (value: unknown) => (typeof value === "string" ? value : "");
const list = (value: unknown) => (Array.isArray(value) ? value.map(String).join(" ") : "");

async function grantsPage(c: ConsoleContext, revokeError?: string, status: Parameters<typeof renderPage>[4] = 200): Promise<Response> {
  const from = c.req.query("cursor");
  const answer = await c.var.call("GET", from ? `/client-grants?cursor=${encodeURIComponent(from)}` : "/client-grants");
  const users = (isObject(answer.body) && Array.isArray(answer.body["users"]) ? answer.body["users"] : []).filter(isObject);
  const more = isObject(answer.body) && typeof answer.body["cursor"] === "string" ? answer.body["cursor"] : undefined;
  const rows = users.flatMap((user) => (Array.isArray(user["grants"]) ? user["grants"] : []).filter(isObject).map((grant) => ({ user, grant })));
  const csrf = c.var.session.csrf;
  const body = (
    <>
      <Problems id="client-grants-errors" error={revokeError ?? (answer.ok ? undefined : errorOf(answer).error)} />
      {rows.length === 0 ? (
        <Empty>No user has signed in to a client yet (or client sign-in, AUTH.signIn, is off).</Empty>
      ) : (
        <table>
          <caption class="muted">Clients users allowed through the gateway's sign-in; revoking ends the client's tokens at once</caption>
          <TableHead columns={["User", "Client", "Resource", "Scope", "Granted", "Expires", "Revoke"]} />
          <tbody>
            {rows.map(({ user, grant }) => {
              const principal = text(user["principal"]);
              const id = text(grant["id"]);
              const action = href(`/client-grants/revoke?principal=${encodeURIComponent(principal)}&grant=${encodeURIComponent(id)}`);
              return (
                <tr data-grant-id={id}>
                  <td>{text(user["email"]) || principal}</td>
                  <td>
                    <Visible text={text(grant["clientName"]) || text(grant["clientId"])} />
                    <br />
                    <code class="muted"><Visible text={text(grant["clientId"])} /></code>
                  </td>
                  <td>{list(grant["resource"])}</td>
                  <td>{list(grant["scope"])}</td>
                  <td><Time iso={text(grant["createdAt"]) || null} /></td>
                  <td>{typeof grant["expiresAt"] === "string" ? <Time iso={grant["expiresAt"]} /> : "never"}</td>
                  <td>
                    <PostButton action={action} csrf={csrf} danger label={`Revoke the grant of ${principal} to ${text(grant["clientId"])}`}>
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
    </>
  );
  return renderPage(c, "Client grants", "/client-grants", body, status);
}

/** Adds the client grants page: list, revoke. */
export function registerClientGrants(app: ConsoleApp): void {
  app.get("/client-grants", (c) => grantsPage(c));
  app.post("/client-grants/revoke", async (c) => {
    const query = `principal=${encodeURIComponent(c.req.query("principal") ?? "")}&grant=${encodeURIComponent(c.req.query("grant") ?? "")}`;
    const answer = await c.var.call("DELETE", `/client-grants?${query}`);
    if (!answer.ok) return grantsPage(c, errorOf(answer).error, statusOf(answer.status));
    return c.redirect(href("/client-grants"), 303);
  });
}

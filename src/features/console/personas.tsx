/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Personas: who may call what, by role; a persona's editor whose "Preview changes" shows
 * what the change does to the tools its callers reach before anything is saved, and
 * whose problems (from the admin API's checker) appear under the field they are about.
 */
import { Fragment, h } from "../../admin/console/jsx";
import type { Child } from "hono/jsx";
import { gatewayConfig } from "../../config/gateway-config";
import { checkPersona, type Persona } from "../personas/persona";
import { CATALOG_MODES } from "../../context/grant";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf, type ApiProblem } from "../../admin/console/admin-client";
import { upstreamCatalog } from "../catalog/console-catalog";
import { appliedTo, grantOf, readPolicy } from "./policy-view";
import { CsrfField, Empty, href, PostButton, Problems, TableHead } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import { DocumentForm, explainStale, saveDocument, type RefusedDocument } from "../../admin/console/document-form";

/** A persona as edited; `etag` is that of the personas document when the editor was opened, so a save over a newer edit is refused (412). */
type Draft = {
  name: string;
  roles: string;
  allow: string;
  deny: string;
  isDefault: boolean;
  rateLimit: string;
  catalog: string;
  etag: string;
};

const FIELDS = [
  ["roles", "Roles (comma-separated)", "analyst, support"],
  ["allow", "Allow (one pattern a line, over <upstream>___<name>)", "alpha___*"],
  ["deny", "Deny (one pattern a line; deny wins)", "*___delete_*"],
] as const;

function list(text: string, separator: RegExp): string[] {
  return text
    .split(separator)
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function personaOf(draft: Draft): Record<string, unknown> {
  return {
    roles: list(draft.roles, /,/),
    allow: list(draft.allow, /\n/),
    deny: list(draft.deny, /\n/),
    default: draft.isDefault,
    ...(draft.rateLimit.trim() ? { rateLimit: draft.rateLimit.trim() } : {}),
    ...(draft.catalog ? { catalog: draft.catalog } : {}),
  };
}

function draftOf(name: string, persona: Persona | undefined, etag: string): Draft {
  return {
    etag,
    name,
    roles: persona?.roles.join(", ") ?? "",
    allow: persona?.allow.join("\n") ?? "",
    deny: persona?.deny.join("\n") ?? "",
    isDefault: persona?.default ?? false,
    rateLimit: persona?.rateLimit ?? "",
    catalog: persona?.catalog ?? "",
  };
}

function FieldProblems({ id, problems, field }: { id: string; problems: readonly ApiProblem[]; field: string }) {
  const mine = problems.filter((problem) => problem.path === `/${field}` || problem.path.startsWith(`/${field}/`));
  return (
    <span id={id} class="problems">
      {mine.map((problem) => `${problem.path}: ${problem.message}`).join("\n")}
    </span>
  );
}

function PersonaForm({
  draft,
  csrf,
  error,
  problems = [],
}: {
  draft: Draft;
  csrf: string;
  error?: string | undefined;
  problems?: readonly ApiProblem[];
}) {
  const invalid = (field: string) => (problems.some((p) => p.path.startsWith(`/${field}`)) ? "true" : undefined);
  return (
    <form method="post" action={href("/personas/preview")} class="stack" aria-labelledby="persona-form-title">
      <h2 id="persona-form-title">Create or change a persona</h2>
      <CsrfField csrf={csrf} />
      <input type="hidden" name="etag" value={draft.etag} />
      <label for="persona-name">Persona name</label>
      <input id="persona-name" name="name" value={draft.name} required aria-describedby="persona-error" />
      {FIELDS.map(([field, label, placeholder]) =>
        field === "roles" ? (
          <>
            <label for={`persona-${field}`}>{label}</label>
            <input
              id={`persona-${field}`}
              name={field}
              value={draft.roles}
              placeholder={placeholder}
              aria-describedby={`persona-${field}-problems`}
              aria-invalid={invalid(field)}
            />
            <FieldProblems id={`persona-${field}-problems`} problems={problems} field={field} />
          </>
        ) : (
          <>
            <label for={`persona-${field}`}>{label}</label>
            <textarea
              id={`persona-${field}`}
              name={field}
              rows={3}
              placeholder={placeholder}
              aria-describedby={`persona-${field}-problems`}
              aria-invalid={invalid(field)}
            >
              {draft[field]}
            </textarea>
            <FieldProblems id={`persona-${field}-problems`} problems={problems} field={field} />
          </>
        ),
      )}
      <label>
        <input type="checkbox" name="default" value="yes" checked={draft.isDefault} /> Default persona (for callers
        whose roles select none)
      </label>
      <label for="persona-rate">Rate limit (a name in AUTH.rateLimits; empty for none)</label>
      <input id="persona-rate" name="rateLimit" value={draft.rateLimit} aria-describedby="persona-rateLimit-problems" />
      <FieldProblems id="persona-rateLimit-problems" problems={problems} field="rateLimit" />
      <label for="persona-catalog">Catalog (how its callers see the tools when a request names no mode)</label>
      <select id="persona-catalog" name="catalog" aria-describedby="persona-catalog-problems">
        <option value="" selected={draft.catalog === ""}>
          not set
        </option>
        {CATALOG_MODES.map((mode) => (
          <option value={mode} selected={draft.catalog === mode}>
            {mode}
          </option>
        ))}
      </select>
      <FieldProblems id="persona-catalog-problems" problems={problems} field="catalog" />
      <Problems
        id="persona-error"
        error={error}
        problems={problems.filter((p) => !/^\/(roles|allow|deny|rateLimit|catalog)(\/|$)/.test(p.path))}
      />
      <div class="row">
        <button type="submit">Preview changes</button>
        <button type="submit" formaction={href("/personas/save")}>
          Save persona
        </button>
      </div>
    </form>
  );
}

/** The tools the stored persona and the draft reach on /mcp, and the difference. */
async function reachPreview(c: ConsoleContext, draft: Draft, stored: Persona | undefined, checked: Persona) {
  const parsed = gatewayConfig(c.env).upstreams;
  const upstreams = parsed.ok ? parsed.value : [];
  const [catalogs, policy] = await Promise.all([
    Promise.all(upstreams.map((u) => upstreamCatalog(u, c.env))),
    readPolicy(
      c.var.call,
      upstreams.map((u) => u.name),
    ),
  ]);
  const reach = (persona: Persona | undefined) =>
    new Set(
      catalogs.flatMap((catalog) =>
        catalog.entries
          .filter(
            (entry) =>
              persona !== undefined && appliedTo(entry, catalog.upstream, policy, grantOf(draft.name, persona)).listed,
          )
          .map((entry) => entry.key),
      ),
    );
  const before = reach(stored);
  const after = reach(checked);
  const gains = [...after].filter((key) => !before.has(key));
  const loses = [...before].filter((key) => !after.has(key));
  return (
    <section aria-labelledby="reach-title" id="reach">
      <h2 id="reach-title">What this change does to the tool list of persona {draft.name}</h2>
      <p role="status">
        {after.size} reached after the change ({before.size} before): {gains.length} gained, {loses.length} lost.
        Nothing is saved yet.
      </p>
      <h3>Gained</h3>
      {gains.length === 0 ? (
        <Empty>none</Empty>
      ) : (
        <ul id="reach-gained">
          {gains.map((key) => (
            <li>
              <code>{key}</code>
            </li>
          ))}
        </ul>
      )}
      <h3>Lost</h3>
      {loses.length === 0 ? (
        <Empty>none</Empty>
      ) : (
        <ul id="reach-lost">
          {loses.map((key) => (
            <li>
              <code>{key}</code>
            </li>
          ))}
        </ul>
      )}
      <h3>Reached after the change</h3>
      {after.size === 0 ? (
        <Empty>nothing: callers of this persona see an empty list</Empty>
      ) : (
        <ul id="reach-after">
          {[...after].map((key) => (
            <li>
              <code>{key}</code>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

async function storedPersonas(
  c: ConsoleContext,
): Promise<{ personas: Record<string, Persona>; etag: string; error?: string }> {
  const answer = await c.var.call("GET", "/personas");
  if (!answer.ok) return { personas: {}, etag: "", error: errorOf(answer).error };
  return {
    personas: (answer.body as { personas?: Record<string, Persona> }).personas ?? {},
    etag: answer.headers.get("etag") ?? "",
  };
}

async function personasPage(
  c: ConsoleContext,
  form: Child,
  status: Parameters<typeof renderPage>[4] = 200,
  visibilityRefused?: RefusedDocument,
  refused?: string,
): Promise<Response> {
  const [{ personas, etag, error }, visibility] = await Promise.all([
    storedPersonas(c),
    c.var.call("GET", "/visibility"),
  ]);
  const names = Object.keys(personas).sort();
  const csrf = c.var.session.csrf;
  const auth = gatewayConfig(c.env).auth;
  const limits = auth.ok && auth.value.mode === "on" ? Object.entries(auth.value.rateLimits) : [];
  const body = (
    <>
      <Problems id="personas-errors" error={refused ?? error} />
      <p class="muted">
        {auth.ok && auth.value.mode === "on"
          ? `Authentication is on: personas apply. Rate limits a persona may name (AUTH.rateLimits): ${limits.length === 0 ? "none configured" : limits.map(([name, binding]) => `${name} (${binding})`).join(", ")}.`
          : "Authentication is off (AUTH): personas are stored but not applied until it is on."}
      </p>
      {names.length === 0 ? (
        <Empty>
          No personas yet — create one below. With authentication on, a caller whose roles select no persona may call
          nothing.
        </Empty>
      ) : (
        <table>
          <caption class="muted">Stored personas</caption>
          <TableHead columns={["Persona", "Roles", "Allow", "Deny", "Default", "Rate limit", "Actions"]} />
          <tbody>
            {names.map((name) => {
              const persona = personas[name]!;
              return (
                <tr>
                  <th scope="row">{name}</th>
                  <td>{persona.roles.join(", ")}</td>
                  <td>{persona.allow.join(" ")}</td>
                  <td>{persona.deny.join(" ") || "none"}</td>
                  <td>{persona.default ? "yes" : "no"}</td>
                  <td>{persona.rateLimit ?? "none"}</td>
                  <td>
                    <a href={href(`/personas?edit=${encodeURIComponent(name)}`)}>Edit {name}</a>{" "}
                    <a href={href(`/tools?persona=${encodeURIComponent(name)}`)}>Tools of {name}</a>
                    <PostButton
                      action={href(`/personas/${encodeURIComponent(name)}/delete`)}
                      csrf={csrf}
                      etag={etag}
                      danger
                    >
                      Delete {name}
                    </PostButton>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {form ?? (
        <PersonaForm
          draft={draftOf(
            c.req.query("edit") ?? "",
            Object.hasOwn(personas, c.req.query("edit") ?? "") ? personas[c.req.query("edit") ?? ""] : undefined,
            etag,
          )}
          csrf={csrf}
        />
      )}
      <h2>Visibility</h2>
      <p class="muted">
        Which tools tools/list shows at all, for every caller ({"{allow?: [globs], deny?: [globs]}"}); a persona narrows
        it further.
      </p>
      <DocumentForm
        id="visibility-document"
        label="Visibility"
        action={href("/personas/visibility")}
        csrf={csrf}
        stored={visibility}
        refused={visibilityRefused}
        rows={5}
      />
    </>
  );
  return renderPage(c, "Personas", "/personas", body, status);
}

function submittedDraft(c: ConsoleContext): Draft {
  const form = c.var.form;
  return {
    name: form.get("name").trim(),
    roles: form.get("roles"),
    allow: form.get("allow"),
    deny: form.get("deny"),
    isDefault: form.get("default") === "yes",
    rateLimit: form.get("rateLimit"),
    catalog: form.get("catalog"),
    etag: form.get("etag"),
  };
}

/** Adds the Personas page: list, preview of a change, save, delete. */
export function registerPersonas(app: ConsoleApp): void {
  app.get("/personas", (c) => personasPage(c, undefined));

  app.post("/personas/preview", async (c) => {
    const draft = submittedDraft(c);
    const checked = checkPersona(personaOf(draft));
    const csrf = c.var.session.csrf;
    if (!checked.ok)
      return personasPage(
        c,
        <PersonaForm
          draft={draft}
          csrf={csrf}
          error="The persona is not valid; nothing was saved"
          problems={checked.problems}
        />,
        400,
      );
    const { personas } = await storedPersonas(c);
    const stored = Object.hasOwn(personas, draft.name) ? personas[draft.name] : undefined;
    return personasPage(
      c,
      <>
        <PersonaForm draft={draft} csrf={csrf} />
        {await reachPreview(c, draft, stored, checked.value)}
      </>,
    );
  });

  app.post("/personas/save", async (c) => {
    const draft = submittedDraft(c);
    const answer = await c.var.call(
      "PUT",
      `/personas/${encodeURIComponent(draft.name)}`,
      JSON.stringify(personaOf(draft)),
      "application/json",
      draft.etag,
    );
    if (!answer.ok) {
      const { error, problems } = errorOf(answer);
      return personasPage(
        c,
        <PersonaForm
          draft={draft}
          csrf={c.var.session.csrf}
          error={explainStale(error, answer.status)}
          problems={problems}
        />,
        statusOf(answer.status),
      );
    }
    return c.redirect(href("/personas"), 303);
  });

  app.post("/personas/visibility", async (c) => {
    const saved = await saveDocument(c, "/visibility");
    return saved
      ? personasPage(c, undefined, statusOf(saved.status), saved.refused)
      : c.redirect(href("/personas"), 303);
  });

  app.post("/personas/:name/delete", async (c) => {
    const answer = await c.var.call(
      "DELETE",
      `/personas/${encodeURIComponent(c.req.param("name"))}`,
      undefined,
      undefined,
      c.var.form.get("etag"),
    );
    if (!answer.ok)
      return personasPage(
        c,
        undefined,
        statusOf(answer.status),
        undefined,
        explainStale(errorOf(answer).error, answer.status, "delete"),
      );
    return c.redirect(href("/personas"), 303);
  });
}

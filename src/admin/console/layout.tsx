/** @jsxRuntime classic */
/** @jsx h */
/**
 * The frame of every console page (navigation, sign-out, the CSRF token for the page's
 * script) and the small pieces pages share: times shown in the viewer's time zone, the
 * admin API's errors listed next to what caused them, empty states.
 *
 * Everything is rendered with hono/jsx, which escapes every text and attribute value:
 * upstream- and caller-provided text (tool descriptions, audit arguments) is never
 * written as markup. Nothing here uses raw HTML.
 */
import { h } from "./jsx";
import type { Child } from "hono/jsx";
import type { ApiProblem } from "./admin-client";
import { CONSOLE_PATH } from "./session";

/** The pages in the navigation, in order: [path under the console, link name]. */
export const PAGES: readonly (readonly [string, string])[] = [
  ["/", "Overview"],
  ["/upstreams", "Upstreams"],
  ["/tools", "Tools"],
  ["/filters", "Filters"],
  ["/personas", "Personas"],
  ["/api-keys", "API keys"],
  ["/audit", "Audit"],
  ["/shaping", "Shaping"],
  ["/guardrails", "Guardrails"],
  ["/approvals", "Approvals"],
  ["/servers", "Servers"],
  ["/pins", "Pins"],
  ["/client-grants", "Client grants"],
];

/** A console path: `href("/tools")` is `/admin/console/tools`. */
export function href(path: string): string {
  return `${CONSOLE_PATH}${path}`;
}

/** The hidden field every state-changing form carries. */
export function CsrfField({ csrf }: { csrf: string }) {
  return <input type="hidden" name="csrf" value={csrf} />;
}

/** A table's head: one row of column headers. */
export function TableHead({ columns }: { columns: readonly (string | false | undefined)[] }) {
  return (
    <thead>
      <tr>
        {columns
          .filter((column): column is string => typeof column === "string")
          .map((column) => (
            <th scope="col">{column}</th>
          ))}
      </tr>
    </thead>
  );
}

/**
 * A one-button form that changes something (a POST with the CSRF token): delete, revoke,
 * probe. `etag` is the version of the document the page showed, sent back so that the
 * change is refused (412) when someone changed the document meanwhile.
 */
export function PostButton({
  action,
  csrf,
  label,
  etag,
  danger = false,
  children,
}: {
  action: string;
  csrf: string;
  label?: string;
  etag?: string;
  danger?: boolean;
  children: Child;
}) {
  return (
    <form method="post" action={action}>
      <CsrfField csrf={csrf} />
      {etag !== undefined && <input type="hidden" name="etag" value={etag} />}
      <button type="submit" class={danger ? "danger" : undefined} aria-label={label}>
        {children}
      </button>
    </form>
  );
}

/** A time, rendered in UTC and shown in the viewer's own time zone by the console's script. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>never</span>;
  return (
    <time datetime={iso} data-local="">
      {iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC")}
    </time>
  );
}

/** An admin API error and its problems (each with its JSON Pointer), shown where it happened. */
export function Problems({
  id,
  error,
  problems = [],
}: {
  id: string;
  error?: string | undefined;
  problems?: readonly ApiProblem[] | undefined;
}) {
  if (!error) return <div id={id}></div>;
  return (
    <div id={id} class="problems" role="alert">
      <p>{error}</p>
      {problems.length > 0 && (
        <ul>
          {problems.map((problem) => (
            <li>
              <code>{problem.path === "" ? "(the document)" : problem.path}</code>: {problem.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** What a page shows where a list has no entries yet. */
export function Empty({ children }: { children: Child }) {
  return <p class="empty">{children}</p>;
}

type LayoutProps = { title: string; active: string; csrf: string; children: Child };

/** The page frame: skip link, navigation with the current page marked, sign-out, main content. */
export function Layout({ title, active, csrf, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="csrf-token" content={csrf} />
        <title>{`${title} · mcp-edge-gateway console`}</title>
        <link rel="stylesheet" href={href("/console.css")} />
        <script src={href("/console.js")} defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header>
          <span class="brand">mcp-edge-gateway</span>
          <nav aria-label="Console">
            <ul>
              {PAGES.map(([path, name]) => (
                <li>
                  <a href={href(path)} aria-current={path === active ? "page" : undefined}>
                    {name}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <form method="post" action={href("/sign-out")} class="sign-out">
            <CsrfField csrf={csrf} />
            <button type="submit">Sign out</button>
          </form>
        </header>
        <main id="main" tabindex={-1}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** A page outside the session (sign-in, errors): no navigation. */
export function BarePage({ title, children }: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · mcp-edge-gateway console`}</title>
        <link rel="stylesheet" href={href("/console.css")} />
      </head>
      <body>
        <main id="main" class="bare">
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

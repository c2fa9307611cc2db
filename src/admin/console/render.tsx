/** @jsxRuntime classic */
/** @jsx h */
/**
 * Turns a page's content into the HTML answer: the document type, the layout around it,
 * the status. One place, so every page gets the same frame.
 */
import { h } from "./jsx";
import type { Child } from "hono/jsx";
import type { ConsoleContext } from "./context";
import { BarePage, Layout } from "./layout";

type Status = 200 | 400 | 401 | 403 | 404 | 409 | 412 | 413 | 415 | 422 | 429 | 500 | 502;

/** Answers with a console page (navigation included). */
export async function renderPage(
  c: ConsoleContext,
  title: string,
  active: string,
  body: Child,
  status: Status = 200,
): Promise<Response> {
  const html = await (
    <Layout title={title} active={active} csrf={c.var.session.csrf}>
      {body}
    </Layout>
  ).toString();
  return c.html(`<!doctype html>${html}`, status);
}

/** Answers with a page outside the session (sign-in, refusals). */
export async function renderBare(
  c: { html: ConsoleContext["html"] },
  title: string,
  body: Child,
  status: Status = 200,
): Promise<Response> {
  const html = await (<BarePage title={title}>{body}</BarePage>).toString();
  return c.html(`<!doctype html>${html}`, status);
}

/** The status an admin API answer's failure is shown with. */
export function statusOf(status: number): Status {
  return ([400, 401, 403, 404, 409, 412, 413, 415, 422, 502] as const).find((known) => known === status) ?? 500;
}

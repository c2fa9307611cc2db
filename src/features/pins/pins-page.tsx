/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Pins: per pinned upstream, its pinning mode, the definitions it keeps, each pending
 * change with the admin API's diff and findings, and the last Cron run's report. Approve
 * and Reject send the digest shown on the page, so an approval never covers a change
 * newer than the one the operator read: when the upstream changed again, the API's 409
 * is shown next to the change with a prompt to reload. Forget drops a definition (its
 * next sight is a first sight) or all of an upstream's.
 *
 * Everything here but the upstream names and the rules came from upstreams: descriptions,
 * schemas, diffs, findings' matches, sweep errors. It is rendered as text with its
 * invisible characters shown (visible-text.tsx).
 */
import { Fragment, h } from "../../admin/console/jsx";
import { isObject } from "../../core/jsonrpc";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import { CsrfField, Empty, href, PostButton, Problems, TableHead, Time } from "../../admin/console/layout";
import { Decision, Findings, PendingChange, sameDefinition, type Shown } from "./pins-change";
import { renderPage, statusOf } from "../../admin/console/render";
import {
  awaitsDecision,
  readPinsView,
  type PinsView,
  type PinView,
  type SweepView,
  type UpstreamPinsView,
} from "./pins-data";
import { Visible } from "../../admin/console/visible-text";

const MODE_TEXT: Readonly<Record<string, string>> = {
  warn: "warn: changes are served and reported",
  enforce: "enforce: clients keep the approved definition until a change is approved",
};

function describedText(definition: unknown): string {
  if (!isObject(definition)) return "";
  const title = typeof definition["title"] === "string" ? definition["title"] : "";
  const description = typeof definition["description"] === "string" ? definition["description"] : "";
  return title && description ? `${title} — ${description}` : title || description;
}

function DefinitionsTable({
  upstream,
  pins,
  csrf,
  shown,
  prefix,
}: {
  upstream: string;
  pins: readonly PinView[];
  csrf: string;
  shown: Shown | undefined;
  prefix: string;
}) {
  return (
    <table>
      <caption class="muted">{`Definitions pinned for ${upstream}`}</caption>
      <TableHead
        columns={[
          "Kind",
          "Name",
          "Status",
          "Title and description (approved)",
          "Findings",
          "Approved digest",
          "Actions",
        ]}
      />
      <tbody>
        {pins.map((pin, index) => {
          const id = `${prefix}-def-${index}`;
          const version = pin.approved ?? pin.pending;
          return (
            <tr data-pin={`${upstream}/${pin.kind}/${pin.name}`} data-status={pin.status}>
              <td>{pin.kind}</td>
              <td>
                <code>
                  <Visible text={pin.name} />
                </code>
              </td>
              <td>
                {pin.status}
                {pin.removedAt && (
                  <>
                    , removed from the upstream's list <Time iso={pin.removedAt} />
                  </>
                )}
              </td>
              <td>
                <Visible text={describedText(version?.definition)} />
              </td>
              <td>
                <Findings findings={pin.approved?.findings ?? []} />
              </td>
              <td>{pin.approved ? <code class="digest">{pin.approved.digest}</code> : "none"}</td>
              <td>
                <form method="post" action={href("/pins/forget")}>
                  <CsrfField csrf={csrf} />
                  <input type="hidden" name="upstream" value={upstream} />
                  <input type="hidden" name="kind" value={pin.kind} />
                  <input type="hidden" name="name" value={pin.name} />
                  <button
                    type="submit"
                    class="danger"
                    aria-label={`Forget ${pin.kind} ${pin.name} of ${upstream}`}
                    aria-describedby={`${id}-result`}
                  >
                    Forget
                  </button>
                </form>
                {!pin.pending && (
                  <Decision id={`${id}-result`} shown={sameDefinition(shown, upstream, pin) ? shown : undefined} />
                )}
                {pin.pending && <div id={`${id}-result`}></div>}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function UpstreamPins({
  entry,
  index,
  csrf,
  shown,
}: {
  entry: UpstreamPinsView;
  index: number;
  csrf: string;
  shown: Shown | undefined;
}) {
  const prefix = `pins-${index}`;
  const changes = entry.definitions.filter((pin) => pin.pending !== null);
  const waiting = changes.filter(awaitsDecision).length;
  return (
    <section class="pins-upstream" id={`pinned-${entry.upstream}`} aria-labelledby={`${prefix}-title`}>
      <h2 id={`${prefix}-title`}>{entry.upstream}</h2>
      <dl>
        <dt>Pinning</dt>
        <dd>{MODE_TEXT[entry.mode] ?? entry.mode}</dd>
        <dt>New definitions</dt>
        <dd>{entry.approveNew ? "held until approved (approveNew)" : "trusted on first sight"}</dd>
        <dt>Awaiting approval</dt>
        <dd>{waiting}</dd>
      </dl>
      {entry.definitions.length === 0 ? (
        <Empty>No pins yet for {entry.upstream} — they appear when its tools are first listed.</Empty>
      ) : (
        <>
          <h3>Pending changes</h3>
          {changes.length === 0 ? (
            <Empty>none: every definition is the approved one</Empty>
          ) : (
            changes.map((pin) => (
              <PendingChange
                upstream={entry.upstream}
                pin={pin}
                csrf={csrf}
                shown={shown}
                id={`${prefix}-change-${entry.definitions.indexOf(pin)}`}
              />
            ))
          )}
          <h3>Pinned definitions</h3>
          <DefinitionsTable
            upstream={entry.upstream}
            pins={entry.definitions}
            csrf={csrf}
            shown={shown}
            prefix={prefix}
          />
          <PostButton
            action={href(`/pins/forget-all?upstream=${encodeURIComponent(entry.upstream)}`)}
            csrf={csrf}
            danger
          >
            Forget all of {entry.upstream}
          </PostButton>
        </>
      )}
    </section>
  );
}

function LastSweep({ sweep }: { sweep: SweepView | null }) {
  return (
    <section aria-labelledby="sweep-title" id="sweep">
      <h2 id="sweep-title">Last scheduled check</h2>
      {!sweep ? (
        <Empty>The Cron Trigger has not run yet (it lists every pinned upstream every few minutes).</Empty>
      ) : (
        <>
          <p>
            Ran <Time iso={sweep.at} />: checked{" "}
            {sweep.checked.length === 0
              ? "no upstream"
              : sweep.checked
                  .map((c) => `${c.upstream} (${c.tools} tools, ${c.prompts} prompts, ${c.changes} changes)`)
                  .join(", ")}
            {sweep.deferred.length > 0 ? `; left for the next run: ${sweep.deferred.join(", ")}` : ""}.
          </p>
          <h3>Unreachable upstreams</h3>
          {sweep.unreachable.length === 0 ? (
            <Empty>none</Empty>
          ) : (
            <ul id="sweep-unreachable">
              {sweep.unreachable.map((u) => (
                <li>
                  <strong>{u.upstream}</strong>: <Visible text={u.error} />
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

function Rules({ rules }: { rules: PinsView["rules"] }) {
  return (
    <details>
      <summary>What the findings look for</summary>
      <table>
        <TableHead columns={["Rule", "Severity", "Why"]} />
        <tbody>
          {rules.map((rule) => (
            <tr>
              <td>{rule.rule}</td>
              <td>{rule.severity}</td>
              <td>{rule.why}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

async function pinsPage(
  c: ConsoleContext,
  shown?: Shown & { where: "definition" | "page" },
  status: Parameters<typeof renderPage>[4] = 200,
): Promise<Response> {
  const read = await readPinsView(c.var.call);
  const csrf = c.var.session.csrf;
  // Upstreams with changes awaiting a decision first (most first); the others in configuration order.
  const waiting = (entry: UpstreamPinsView) => entry.definitions.filter(awaitsDecision).length;
  const upstreams = (read.ok ? read.pins.upstreams : []).slice().sort((a, b) => waiting(b) - waiting(a));
  const known =
    shown?.where === "definition" &&
    upstreams.some(
      (u) => u.upstream === shown.upstream && u.definitions.some((pin) => sameDefinition(shown, u.upstream, pin)),
    );
  const pageError = !read.ok ? read.error : shown && !known ? shown.error : undefined;
  const body = (
    <>
      <Problems id="pins-errors" error={pageError} />
      {read.ok && upstreams.length === 0 && (
        <Empty>Pinning is off for every upstream (UPSTREAMS[].pinning is "off"): nothing is pinned.</Empty>
      )}
      {read.ok && upstreams.length > 0 && upstreams.every((u) => u.definitions.length === 0) && (
        <Empty>No pins yet — pins appear when an upstream's tools are first listed.</Empty>
      )}
      {upstreams.map((entry, index) => (
        <UpstreamPins entry={entry} index={index} csrf={csrf} shown={known ? shown : undefined} />
      ))}
      {read.ok && <LastSweep sweep={read.pins.lastSweep} />}
      {read.ok && <Rules rules={read.pins.rules} />}
    </>
  );
  return renderPage(c, "Pins", "/pins", body, status);
}

const NO_UPSTREAM = "The form named no upstream: reload the Pins page and use its buttons";
const STALE_NOTE =
  "the upstream changed this definition after the page was loaded, so nothing was decided: reload the page and review the version it serves now";

/** Adds the Pins page: pins per upstream, approve and reject by digest, forget. */
export function registerPins(app: ConsoleApp): void {
  app.get("/pins", (c) => pinsPage(c));

  app.post("/pins/decide", async (c) => {
    const form = c.var.form;
    const [upstream, kind, name, digest, verdict] = ["upstream", "kind", "name", "digest", "verdict"].map((field) =>
      form.get(field),
    ) as [string, string, string, string, string];
    if (verdict !== "approve" && verdict !== "reject")
      return pinsPage(c, { upstream, kind, name, error: "Choose Approve or Reject", where: "definition" }, 400);
    const answer = await c.var.call(
      "POST",
      `/pins/${encodeURIComponent(upstream)}/${encodeURIComponent(name)}/${verdict}`,
      JSON.stringify({ digest, kind }),
    );
    if (answer.ok) return c.redirect(href("/pins"), 303);
    const { error } = errorOf(answer);
    return pinsPage(
      c,
      {
        upstream,
        kind,
        name,
        error:
          answer.status === 409
            ? `Not ${verdict === "approve" ? "approved" : "rejected"}: ${STALE_NOTE}. The admin API said: ${error}`
            : error,
        where: "definition",
      },
      statusOf(answer.status),
    );
  });

  // One definition, by a name the upstream chose ("", "." and ".." included: it goes in the
  // query, never in the path, so no name can select the upstream's whole pins).
  app.post("/pins/forget", async (c) => {
    const form = c.var.form;
    const [upstream, kind, name] = [form.get("upstream"), form.get("kind"), form.get("name")];
    if (upstream === "") return pinsPage(c, { upstream, kind, name, error: NO_UPSTREAM, where: "page" }, 400);
    const query = new URLSearchParams({ kind, name });
    const answer = await c.var.call("DELETE", `/pins/${encodeURIComponent(upstream)}?${query.toString()}`);
    if (answer.ok) return c.redirect(href("/pins"), 303);
    const shown = { upstream, kind, name, error: errorOf(answer).error, where: "definition" } as const;
    return pinsPage(c, shown, statusOf(answer.status));
  });

  app.post("/pins/forget-all", async (c) => {
    const upstream = c.req.query("upstream") ?? c.var.form.get("upstream");
    if (upstream === "") return pinsPage(c, { upstream, kind: "", name: "", error: NO_UPSTREAM, where: "page" }, 400);
    const answer = await c.var.call("DELETE", `/pins/${encodeURIComponent(upstream)}`);
    if (answer.ok) return c.redirect(href("/pins"), 303);
    const shown = { upstream, kind: "", name: "", error: errorOf(answer).error, where: "page" } as const;
    return pinsPage(c, shown, statusOf(answer.status));
  });
}

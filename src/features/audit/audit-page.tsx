/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Audit: the audit trail queried by time, tool, user, upstream and outcome (GET
 * /admin/audit), calls and errors over the range as a chart, a page of events newest
 * first with each event's detail, and "Older events" for the page before. Another feature's
 * event may be a row of its own kind, plugged in by the composition root as an
 * `AuditEventRow` (a pin event, a definition that changed with its findings:
 * features/pins/pin-event-row.tsx), never a green call. Arguments in events are
 * caller-provided: they are shown as text, like everything else.
 */
// biome-ignore lint/style/useImportType: h is the JSX factory (tsconfig.json jsxFactory), used by every element below
import { Fragment, h } from "../../admin/console/jsx";
import type { AuditEvent } from "./audit-event";
import type { ConsoleApp } from "../../admin/console/context";
import { perSlot, readAudit } from "./audit-data";
import { MinuteChart } from "../../admin/console/chart";
import { Empty, href, Problems, Time, TableHead } from "../../admin/console/layout";
import { renderPage } from "../../admin/console/render";
import type { ConsolePage } from "../../admin/console/index";

/** A kind of event another feature shows as a row of its own: the first whose `matches` holds draws the row. */
export type AuditEventRow = {
  readonly matches: (event: AuditEvent) => boolean;
  readonly Row: (props: { event: AuditEvent }) => h.JSX.Element;
};

const PAGE_SIZE = 50;
const CHART_SLOTS = 60;
const RANGES: readonly (readonly [string, string, number])[] = [
  ["15m", "last 15 minutes", 15 * 60_000],
  ["1h", "last hour", 60 * 60_000],
  ["24h", "last 24 hours", 24 * 60 * 60_000],
  ["7d", "last 7 days", 7 * 24 * 60 * 60_000],
];
const FILTERS = [
  ["from", "From (ISO 8601, e.g. 2026-11-24T09:00Z; empty: the range)"],
  ["to", "To (ISO 8601; empty: now)"],
  ["tool", "Tool (name or glob, e.g. alpha___*)"],
  ["user", "User (principal)"],
  ["upstream", "Upstream"],
] as const;

function whatOf(event: AuditEvent): string {
  return (
    event["gen_ai.tool.name"] ?? event["gen_ai.prompt.name"] ?? event["mcp.resource.uri"] ?? event["mcp.method.name"]
  );
}

function EventRow({ event }: { event: AuditEvent }) {
  const outcome = event["gateway.outcome"];
  return (
    <tr data-event-id={event["gateway.event_id"]}>
      <td>
        <Time iso={event.timestamp} />
      </td>
      <td>
        <code>{whatOf(event)}</code>
      </td>
      <td>{event["user.id"]}</td>
      <td>{event["gateway.upstream"] ?? ""}</td>
      <td>
        <span class={`badge ${outcome === "success" ? "ok" : "bad"}`}>{outcome}</span>
      </td>
      <td>{event["gateway.duration_ms"]} ms</td>
      <td>
        <details>
          <summary>Event {event["gateway.event_id"].slice(0, 8)}</summary>
          <pre>{JSON.stringify(event, null, 2)}</pre>
        </details>
      </td>
    </tr>
  );
}

/**
 * The Audit page, drawing the events `rows` claim with their own rows.
 *
 * @example
 * auditPage([{ matches: isPinEvent, Row: PinEventRow }])
 */
export function auditPage(rows: readonly AuditEventRow[]): ConsolePage {
  return (app) => registerAudit(app, rows);
}

function registerAudit(app: ConsoleApp, rows: readonly AuditEventRow[]): void {
  app.get("/audit", async (c) => {
    const q = (name: string) => (c.req.query(name) ?? "").trim();
    const range = RANGES.find(([key]) => key === q("range")) ?? RANGES[1]!;
    const toMs = q("to") === "" ? Date.now() : /^\d+$/.test(q("to")) ? Number(q("to")) : Date.parse(q("to"));
    const fromMs =
      q("from") === "" ? toMs - range[2] : /^\d+$/.test(q("from")) ? Number(q("from")) : Date.parse(q("from"));
    const params = new URLSearchParams({
      from: Number.isFinite(fromMs) ? String(fromMs) : q("from"),
      to: Number.isFinite(toMs) ? String(toMs) : q("to"),
      limit: String(PAGE_SIZE),
    });
    for (const [name] of FILTERS) if (q(name) !== "" && name !== "from" && name !== "to") params.set(name, q(name));
    if (q("outcome") !== "") params.set("outcome", q("outcome"));
    const read = await readAudit(c.var.call, params);
    const events = read.ok ? [...read.events].reverse() : [];
    const chartRead = read.ok
      ? await readAudit(c.var.call, new URLSearchParams({ ...Object.fromEntries(params), limit: "1000" }))
      : read;
    const bars = perSlot(chartRead.ok ? chartRead.events : [], fromMs, toMs + 1, CHART_SLOTS);
    const oldest = events.at(-1);
    const older = new URLSearchParams(c.req.query());
    if (oldest) {
      older.set("to", String(Date.parse(oldest.timestamp) - 1));
      older.set("from", String(fromMs));
    }
    const body = (
      <>
        <form method="get" action={href("/audit")} class="row" aria-label="Audit query">
          <div>
            <label for="audit-range">Range</label>
            <select id="audit-range" name="range">
              {RANGES.map(([key, label]) => (
                <option value={key} selected={key === range[0]}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          {FILTERS.map(([name, label]) => (
            <div>
              <label for={`audit-${name}`}>{label}</label>
              <input id={`audit-${name}`} name={name} value={q(name)} />
            </div>
          ))}
          <div>
            <label for="audit-outcome">Outcome</label>
            <select id="audit-outcome" name="outcome">
              {["", "success", "tool_error", "error"].map((value) => (
                <option value={value} selected={value === q("outcome")}>
                  {value === "" ? "any" : value}
                </option>
              ))}
            </select>
          </div>
          <button type="submit">Search</button>
        </form>
        <Problems id="audit-errors" error={read.ok ? undefined : read.error} />
        {read.ok && read.truncated && <p class="muted">{`The search stopped early: ${read.truncated}`}</p>}
        <h2>Calls and errors over time</h2>
        {Number.isFinite(fromMs) && Number.isFinite(toMs) && fromMs <= toMs ? (
          <MinuteChart
            calls={bars.calls}
            errors={bars.errors}
            label={`Audit events from ${new Date(fromMs).toISOString()} to ${new Date(toMs).toISOString()}`}
          />
        ) : (
          <Empty>No chart: the range is not valid.</Empty>
        )}
        <h2>Events, newest first</h2>
        {read.ok && events.length === 0 ? (
          <Empty>No audit events match in this range. Events reach the trail within seconds of a call.</Empty>
        ) : (
          <table>
            <caption class="muted">{`${events.length} event${events.length === 1 ? "" : "s"}${events.length === PAGE_SIZE ? " (one page)" : ""}`}</caption>
            <TableHead columns={["Time", "Tool or method", "User", "Upstream", "Outcome", "Duration", "Detail"]} />
            <tbody>
              {events.map((event) => {
                const Row = rows.find((row) => row.matches(event))?.Row ?? EventRow;
                return <Row event={event} />;
              })}
            </tbody>
          </table>
        )}
        {events.length === PAGE_SIZE && (
          <p>
            <a href={href(`/audit?${older}`)}>Older events</a>
          </p>
        )}
      </>
    );
    return renderPage(c, "Audit", "/audit", body);
  });
}

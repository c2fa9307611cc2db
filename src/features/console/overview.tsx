/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Overview: each upstream with its health, era and error rate, its pin changes awaiting
 * approval (a link to the Pins page), and its calls per minute over the last hour (from
 * the audit trail) as a small chart; above them, a warning when callers can call nothing
 * (no persona, or API keys whose roles select none: access-warnings.tsx).
 */
import { Fragment, h } from "../../admin/console/jsx";
import type { ConsoleApp } from "../../admin/console/context";
import { perSlot, readAudit } from "../audit/audit-data";
import { MinuteChart } from "../../admin/console/chart";
import { Empty, href, Problems, Time } from "../../admin/console/layout";
import { renderPage } from "../../admin/console/render";
import { eraOf, rateText, readHealth } from "./upstream-health";
import { AccessWarnings, readAccessWarnings } from "./access-warnings";
import { gatewayConfig } from "../../config/gateway-config";

const CHART_MINUTES = 60;

/** Adds the Overview page (the console's start). */
export function registerOverview(app: ConsoleApp): void {
  app.get("/", async (c) => {
    const now = Date.now();
    const auth = gatewayConfig(c.env).auth;
    const [health, audit, access] = await Promise.all([
      readHealth(c.var.call),
      readAudit(
        c.var.call,
        new URLSearchParams({ from: String(now - CHART_MINUTES * 60_000), to: String(now), limit: "1000" }),
      ),
      readAccessWarnings(c.var.call, auth.ok ? auth.value : undefined),
    ]);
    const events = audit.ok ? audit.events : [];
    const body = (
      <>
        <Problems id="overview-errors" error={!health.ok ? health.error : !audit.ok ? audit.error : undefined} />
        <AccessWarnings data={access} />
        {health.ok && health.upstreams.length === 0 && (
          <Empty>No upstreams are configured: add one to UPSTREAMS in wrangler.toml (see docs/configuration.md).</Empty>
        )}
        <div class="cards">
          {(health.ok ? health.upstreams : []).map((upstream) => {
            const minutes = perSlot(
              events.filter((event) => event["gateway.upstream"] === upstream.name),
              now - CHART_MINUTES * 60_000,
              now,
              CHART_MINUTES,
            );
            const healthy =
              upstream.lastFailure === null ||
              (upstream.lastSuccess !== null && upstream.lastSuccess > upstream.lastFailure.at);
            return (
              <section class="card" aria-labelledby={`up-${upstream.name}`}>
                <h2 id={`up-${upstream.name}`}>
                  <a href={href(`/tools?upstream=${encodeURIComponent(upstream.name)}`)}>{upstream.name}</a>{" "}
                  <span class={`badge ${upstream.calls === 0 ? "" : healthy ? "ok" : "bad"}`}>
                    {upstream.calls === 0 && upstream.lastFailure === null
                      ? "no recent calls"
                      : healthy
                        ? "healthy"
                        : "failing"}
                  </span>
                </h2>
                <dl>
                  <dt>Era</dt>
                  <dd>{eraOf(upstream.protocolVersion)}</dd>
                  <dt>Error rate (recent)</dt>
                  <dd>
                    {rateText(upstream.errorRate)} of {upstream.calls} calls
                  </dd>
                  <dt>Pin changes awaiting approval</dt>
                  <dd data-pins-awaiting={upstream.pins ? String(upstream.pins.awaiting) : "off"}>
                    {!upstream.pins ? (
                      "pinning off"
                    ) : upstream.pins.awaiting === 0 ? (
                      `none (${upstream.pins.mode})`
                    ) : (
                      <a
                        href={href(`/pins#pinned-${upstream.name}`)}
                      >{`${upstream.pins.awaiting} (${upstream.pins.mode}): review them`}</a>
                    )}
                  </dd>
                  <dt>Last success</dt>
                  <dd>
                    <Time iso={upstream.lastSuccess} />
                  </dd>
                </dl>
                <h3>Calls per minute, last hour</h3>
                <MinuteChart calls={minutes.calls} errors={minutes.errors} label={`${upstream.name}, last hour`} />
              </section>
            );
          })}
        </div>
        {health.ok && health.note && <p class="muted">{health.note}</p>}
      </>
    );
    return renderPage(c, "Overview", "/", body);
  });
}

/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Upstreams: each upstream's configuration as the gateway parsed it (no header values, no
 * credentials: their names only), its last errors, and a probe button (POST
 * /admin/upstreams/<name>/probe) whose answer is shown beside the upstream probed.
 */
import { Fragment, h } from "../../admin/console/jsx";
import { gatewayConfig } from "../../config/gateway-config";
import type { UpstreamConfig } from "../../config/upstreams";
import { redactSecrets } from "../../config/secrets";
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { errorOf } from "../../admin/console/admin-client";
import { Empty, href, PostButton, Problems, Time } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import { eraOf, rateText, readHealth, type UpstreamHealth } from "./upstream-health";
import { readAudit } from "../audit/audit-data";
import type { AuditEvent } from "../audit/audit-event";
import { upstreamSource } from "../live-upstreams/routes";
import {
  ImportServerForm,
  LiveUpstreamForm,
  registerLiveUpstreamConsole,
  RemoveLiveUpstream,
} from "../live-upstreams/console";

type ProbeShown = { name: string; ok: boolean; text: string };
/** Errors listed per upstream, newest first, from the last 24 hours of the audit trail. */
const LAST_ERRORS = 5;
const LAST_ERRORS_QUERY = new URLSearchParams({ outcome: "error", limit: "200" });

/** The URL without its query and fragment (where a token might hide), secrets redacted. */
function shownUrl(upstream: UpstreamConfig, env: Readonly<Record<string, unknown>>): string {
  try {
    const url = new URL(upstream.url);
    return redactSecrets(`${url.origin}${url.pathname}${url.search ? "?…" : ""}`, env);
  } catch {
    return "(not a URL)";
  }
}

type CardProps = {
  upstream: UpstreamConfig;
  health: UpstreamHealth | undefined;
  errors: readonly AuditEvent[];
  probe: ProbeShown | undefined;
  csrf: string;
  env: Readonly<Record<string, unknown>>;
};

function UpstreamCard({ upstream, health, errors, probe, csrf, env }: CardProps) {
  return (
    <section class="card" aria-labelledby={`cfg-${upstream.name}`}>
      <h2 id={`cfg-${upstream.name}`}>{upstream.name}</h2>
      <dl>
        <dt>Reached at</dt>
        <dd>{upstream.service ? `service binding ${upstream.service}` : shownUrl(upstream, env)}</dd>
        <dt>Protocol</dt>
        <dd>
          {upstream.protocol
            ? `configured: ${upstream.protocol}`
            : `discovered: ${eraOf(health?.protocolVersion ?? null)}`}
        </dd>
        <dt>Timeouts</dt>
        <dd>
          answer {upstream.timeoutMs} ms, idle stream {upstream.idleTimeoutMs} ms
        </dd>
        <dt>Headers</dt>
        <dd>{Object.keys(upstream.headers).length === 0 ? "none" : Object.keys(upstream.headers).join(", ")}</dd>
        <dt>Credential</dt>
        <dd>{upstream.credential ? "configured (a secret)" : "none"}</dd>
        <dt>Identity assertion</dt>
        <dd>{upstream.identity ? `in header ${upstream.identity.header}` : "off"}</dd>
        <dt>Recent calls</dt>
        <dd>
          {health?.calls ?? 0}, error rate {rateText(health?.errorRate ?? null)}
        </dd>
        <dt>Last error</dt>
        <dd>
          {health?.lastFailure ? (
            <>
              <Time iso={health.lastFailure.at} />: {health.lastFailure.reason}
            </>
          ) : (
            "none recently"
          )}
        </dd>
      </dl>
      <h3>Last errors in the audit trail (24 h)</h3>
      {errors.length === 0 ? (
        <Empty>none</Empty>
      ) : (
        <ul>
          {errors.map((event) => (
            <li>
              <Time iso={event.timestamp} /> <code>{event["gen_ai.tool.name"] ?? event["mcp.method.name"]}</code>:{" "}
              {event["gateway.error.message"] ?? event["error.type"] ?? "error"}
            </li>
          ))}
        </ul>
      )}
      <PostButton action={href(`/upstreams/${encodeURIComponent(upstream.name)}/probe`)} csrf={csrf}>
        Probe {upstream.name}
      </PostButton>
      {upstreamSource(upstream) === "live" && <RemoveLiveUpstream name={upstream.name} csrf={csrf} />}
      <output
        id={`probe-${upstream.name}`}
        class={probe && !probe.ok ? "problems" : "notice"}
        role={probe ? "status" : undefined}
      >
        {probe?.name === upstream.name ? probe.text : ""}
      </output>
    </section>
  );
}

async function upstreamsPage(
  c: ConsoleContext,
  probe?: ProbeShown,
  status: Parameters<typeof renderPage>[4] = 200,
): Promise<Response> {
  const parsed = gatewayConfig(c.env).upstreams;
  const [health, audit] = await Promise.all([readHealth(c.var.call), readAudit(c.var.call, LAST_ERRORS_QUERY)]);
  const errorsOf = (name: string) =>
    audit.ok
      ? audit.events
          .filter((event) => event["gateway.upstream"] === name)
          .reverse()
          .slice(0, LAST_ERRORS)
      : [];
  const byName = new Map((health.ok ? health.upstreams : []).map((h) => [h.name, h]));
  const body = (
    <>
      <Problems
        id="upstreams-errors"
        error={
          !parsed.ok
            ? "UPSTREAMS is invalid; the gateway's log lists each problem"
            : probe && !probe.ok && !parsed.value.some((u) => u.name === probe.name)
              ? probe.text
              : !health.ok
                ? health.error
                : !audit.ok
                  ? audit.error
                  : undefined
        }
      />
      {probe?.ok && parsed.ok && !parsed.value.some((u) => u.name === probe.name) && (
        <p class="notice" role="status">
          {probe.text}
        </p>
      )}
      {parsed.ok && parsed.value.length === 0 && (
        <Empty>No upstreams are configured: add one to UPSTREAMS in wrangler.toml.</Empty>
      )}
      <div class="cards">
        {(parsed.ok ? parsed.value : []).map((upstream) => (
          <UpstreamCard
            upstream={upstream}
            health={byName.get(upstream.name)}
            errors={errorsOf(upstream.name)}
            probe={probe?.name === upstream.name ? probe : undefined}
            csrf={c.var.session.csrf}
            env={c.env}
          />
        ))}
      </div>
      <LiveUpstreamForm csrf={c.var.session.csrf} />
      <ImportServerForm csrf={c.var.session.csrf} />
    </>
  );
  return renderPage(c, "Upstreams", "/upstreams", body, status);
}

/** Adds the Upstreams page and its probe button. */
export function registerUpstreams(app: ConsoleApp): void {
  app.get("/upstreams", (c) => upstreamsPage(c));
  registerLiveUpstreamConsole(app, upstreamsPage);
  app.post("/upstreams/:name/probe", async (c) => {
    const name = c.req.param("name");
    const answer = await c.var.call("POST", `/upstreams/${encodeURIComponent(name)}/probe`);
    const result = answer.body as Record<string, unknown>;
    const text = !answer.ok
      ? errorOf(answer).error
      : result["ok"] === true
        ? `Answered: ${String(result["protocolVersion"])}, initialize ${String(result["initializeMs"])} ms, ping ${String(result["pingMs"])} ms`
        : `Failed at ${String(result["stage"])}: ${String(result["error"])}`;
    return upstreamsPage(
      c,
      { name, ok: answer.ok && result["ok"] === true, text },
      answer.ok ? 200 : statusOf(answer.status),
    );
  });
}

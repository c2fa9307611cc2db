/**
 * mcp-edge-gateway: the Worker entry point. `fetch` serves clients and the admin API;
 * `queue` consumes the audit Queue into R2; `scheduled` (the Cron Trigger of wrangler.toml)
 * re-lists every pinned upstream, so a changed tool is seen with no client traffic.
 */
import { consumeAuditBatch } from "./features/audit/audit-consumer";
import { createApp, type GatewayBindings } from "./gateway";
import { sweepPins } from "./features/pins/pin-sweep";
import { refreshLiveUpstreams } from "./features/live-upstreams/live-list";

/** Durable Object classes are Worker entry points too (wrangler.toml binds them). */
export { InputRendezvous } from "./shell/input-rendezvous";
/** The Durable Object holding a 2025 upstream's call across a 2026-07-28 client's retries (BRIDGED_CALLS). */
export { BridgedCall } from "./shell/bridged-call";
/** The Durable Object holding a call until a person approves it (APPROVALS; features/approvals/). */
export { CallApproval } from "./features/approvals/call-approval";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch, env) => consumeAuditBatch(batch, env),
  scheduled: async (controller, env, ctx) => {
    await refreshLiveUpstreams(env, 0);
    await sweepPins(env, ctx, controller.scheduledTime);
  },
} satisfies ExportedHandler<GatewayBindings>;

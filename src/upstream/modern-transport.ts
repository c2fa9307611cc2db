/**
 * The 2026-07-28 transport: no session and no handshake; each request with the `_meta`
 * envelope and mirrored headers (modern-send.ts), `subscriptions/listen` for what the
 * upstream sends outside requests (modern-listen.ts), nothing to end.
 */
import { ok } from "../core/errors";
import { listenModern } from "./modern-listen";
import { sendModern } from "./modern-send";
import type { UpstreamTransport } from "./transport";

/** The 2026-07-28 side of an upstream. */
export const modernTransport: UpstreamTransport = {
  side: "modern",
  asks: "input-required",

  send(upstream, text, request, _session, options) {
    return sendModern(upstream, text, request, options);
  },

  async listen(upstream, request, _session, filter) {
    const stream = await listenModern(upstream, request, filter);
    return stream.ok ? ok({ acknowledged: stream.value.acknowledged, reply: stream.value.reply }) : stream;
  },

  async close() {
    // A 2026-07-28 upstream keeps no session: a listen ends with its connection.
  },
};

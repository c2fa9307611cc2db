/**
 * The 2026-07-28 transport: no session and no handshake; each request with the `_meta`
 * envelope and mirrored headers (modern-send.ts), `subscriptions/listen` for what the
 * upstream sends outside requests (modern-listen.ts), nothing to end.
 *
 * What has no 2026-07-28 meaning is decided here, not sent: the client's notifications and
 * answers over HTTP (accepted), and `ping` and `logging/setLevel`, which the revision
 * removed (answered with an empty result; a 2025 client's level travels in each request's
 * envelope instead).
 */
import { ok } from "../core/errors";
import type { JsonRpcId, JsonRpcRequest } from "../core/jsonrpc";
import { readUpstreamMessage } from "../core/validate-message";
import type { UpstreamReply } from "./client";
import { listenModern } from "./modern-listen";
import { sendModern } from "./modern-send";
import type { UpstreamTransport } from "./transport";

/** The methods 2026-07-28 removed, answered by this side itself. */
const ANSWERED_HERE: ReadonlySet<string> = new Set(["ping", "logging/setLevel"]);

/** What a message that is not sent gets: HTTP 202, nothing in it. */
function accepted(): UpstreamReply {
  return {
    mode: "accepted",
    sessionId: null,
    messages: (async function* () {})(),
    resume: {},
    status: 202,
    received: { bytes: 0 },
  };
}

/** The empty result this side answers a removed method with. */
function emptyResult(id: JsonRpcId): UpstreamReply {
  const wire = readUpstreamMessage(JSON.stringify({ jsonrpc: "2.0", id, result: {} }))!;
  return {
    mode: "json",
    sessionId: null,
    messages: (async function* () {
      yield wire;
    })(),
    resume: {},
    status: 200,
    received: { bytes: 0 },
  };
}

/** The 2026-07-28 side of an upstream. */
export const modernTransport: UpstreamTransport = {
  side: "modern",
  asks: "input-required",

  async send(upstream, text, request, _session, options) {
    const message = readUpstreamMessage(text)?.message;
    if (!message || !("method" in message) || !("id" in message)) return ok(accepted());
    const call = message as JsonRpcRequest;
    if (ANSWERED_HERE.has(call.method)) return ok(emptyResult(call.id));
    return sendModern(upstream, text, call, request, options);
  },

  async listen(upstream, request, _session, filter) {
    const stream = await listenModern(upstream, request, filter);
    return stream.ok ? ok({ acknowledged: stream.value.acknowledged, reply: stream.value.reply }) : stream;
  },

  async close() {
    // A 2026-07-28 upstream keeps no session: a listen ends with its connection.
  },
};

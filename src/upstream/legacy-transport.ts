/**
 * The 2025 transport (2025-03-26 to 2025-11-25): each message a POST inside the upstream's
 * session (`Mcp-Session-Id`, `MCP-Protocol-Version`), the session's GET stream for what the
 * upstream sends outside requests, DELETE to end it. The session itself is opened by the
 * handshake (handshake.ts) and kept by the pool (pool.ts).
 */
import { fail, ok } from "../core/errors";
import { exchange } from "./client";
import { describeFailure } from "./failures";
import type { UpstreamTransport } from "./transport";

/** The 2025 side of an upstream. */
export const legacyTransport: UpstreamTransport = {
  side: "legacy",
  asks: "server-requests",

  send(upstream, text, request, session, options) {
    // The optional members last (shell/app.ts, `endpoint`); the options may override any.
    return exchange({
      upstream,
      env: request.env,
      method: "POST",
      body: text,
      sessionId: session.sessionId,
      protocolVersion: session.protocolVersion,
      ...(request.identity ? { identity: request.identity } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
      ...options,
    });
  },

  async listen(upstream, request, session) {
    // Without a session an upstream has no way to address messages to this client.
    if (!session.sessionId)
      return fail({
        reason: "http-status",
        upstream: upstream.name,
        status: 405,
        detail: `upstream "${upstream.name}" keeps no sessions, so it has no stream of its own messages`,
      });
    const reply = await exchange({
      upstream,
      env: request.env,
      ...(request.identity ? { identity: request.identity } : {}),
      method: "GET",
      sessionId: session.sessionId,
      protocolVersion: session.protocolVersion,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!reply.ok) return reply;
    if (reply.value.mode !== "sse") {
      for await (const _ of reply.value.messages) break; // not a stream: read (and so release) its body
      return fail({
        reason: "http-status",
        upstream: upstream.name,
        status: reply.value.status,
        detail: `upstream "${upstream.name}" answered its GET without a stream`,
      });
    }
    return ok({ reply: reply.value });
  },

  async close(upstream, request, session) {
    if (!session.sessionId) return;
    try {
      const ended = await exchange({
        upstream,
        env: request.env,
        ...(request.identity ? { identity: request.identity } : {}),
        method: "DELETE",
        sessionId: session.sessionId,
        protocolVersion: session.protocolVersion,
      });
      if (!ended.ok && ended.reason !== "http-status")
        console.warn(`mcp-edge-gateway: ending a session of "${upstream.name}": ${describeFailure(ended)}`);
    } catch (error) {
      console.warn(
        `mcp-edge-gateway: ending a session of "${upstream.name}": ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  },
};

/**
 * The stream of messages upstreams send outside any request (list_changed, resource
 * updates, server-to-client requests): each upstream's own stream, opened in the
 * client's upstream sessions and merged. Each message goes to `ctx.emit`, and the next is
 * read only once the client's stream has taken it.
 */
import { GatewayError } from "../core/errors";
import { poolRequest, type CallContext } from "../context/call-context";
import { exchange } from "../upstream/client";
import { upstreamMessages } from "../upstream/pool";
import { heldSession } from "../upstream/upstream-session";
import { toClient } from "./forward";
import { listenModern, type ListenFilter } from "../upstream/modern-listen";
import { describeFailure } from "../upstream/failures";
import { MODERN_UPSTREAM_VERSION } from "../upstream/modern-wire";

/** What a 2025 client's GET stream carries from a 2026-07-28 upstream: its list changes. */
const LIST_CHANGES: ListenFilter = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };

/**
 * Opens the route's upstream streams; calls `ctx.streamed` once one is open (405 when
 * none is), then relays until every stream ends or the client goes away.
 */
export async function listen(ctx: CallContext): Promise<void> {
  const opened = await Promise.all(
    ctx.route.upstreams.map(async (upstream) => {
      const session = heldSession(ctx.upstreamClient, upstream.name);
      // A 2026-07-28 upstream has no GET stream: its subscriptions/listen stands in for it.
      if (session?.protocolVersion === MODERN_UPSTREAM_VERSION) {
        const stream = await listenModern(upstream, { env: ctx.services.env, session: ctx.upstreamClient, signal: ctx.signal, identity: poolRequest(ctx).identity }, LIST_CHANGES);
        if (!stream.ok) console.warn(`mcp-edge-gateway: ${describeFailure(stream)}`);
        return stream.ok ? { upstream, reply: stream.value.reply } : undefined;
      }
      // Without a session an upstream has no way to address messages to this client.
      if (!session?.sessionId) return undefined;
      const reply = await exchange({
        upstream,
        env: ctx.services.env,
        method: "GET",
        sessionId: session.sessionId,
        protocolVersion: session.protocolVersion,
        signal: ctx.signal,
        // An upstream that opted in to identity assertions is told who listens, as on every other request.
        identity: poolRequest(ctx).identity,
      });
      if (!reply.ok) {
        if (reply.reason !== "http-status") console.warn(`mcp-edge-gateway: GET stream of "${upstream.name}": ${reply.reason}`);
        return undefined;
      }
      if (reply.value.mode !== "sse") {
        for await (const _ of reply.value.messages) break; // not a stream: read (and so release) its body
        return undefined;
      }
      return { upstream, reply: reply.value };
    }),
  );
  const streams = opened.filter((entry) => entry !== undefined);
  if (streams.length === 0) {
    throw new GatewayError(405, -32000, "Method Not Allowed: no upstream of this session offers a server-to-client stream", undefined, null, { allow: "POST, DELETE" });
  }
  ctx.streamed?.();
  await Promise.all(
    streams.map(async ({ upstream, reply }) => {
      try {
        for await (const item of upstreamMessages(reply, upstream.name)) {
          if (!item.ok || ctx.signal.aborted) break;
          // A listen stream's own end (its response) is not a message of the 2025 GET stream.
          if ("id" in item.value.message && !("method" in item.value.message)) break;
          await ctx.emit(await toClient(ctx, upstream.name, item.value));
        }
      } catch {
        // The client went away while a message was in flight; nothing to deliver it to.
      }
    }),
  );
}

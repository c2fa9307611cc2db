/**
 * The stream of messages upstreams send outside any request (list_changed, resource
 * updates, server-to-client requests): each upstream's own stream, opened in the
 * client's upstream sessions and merged. Each message goes to `ctx.emit`, and the next is
 * read only once the client's stream has taken it.
 */
import { GatewayError } from "../core/errors";
import type { CallContext } from "../context/call-context";
import { exchange } from "../upstream/client";
import { upstreamMessages } from "../upstream/pool";
import { heldSession } from "../upstream/upstream-session";
import { toClient } from "./forward";

/**
 * Opens the route's upstream streams; calls `ctx.streamed` once one is open (405 when
 * none is), then relays until every stream ends or the client goes away.
 */
export async function listen(ctx: CallContext): Promise<void> {
  const opened = await Promise.all(
    ctx.route.upstreams.map(async (upstream) => {
      const session = heldSession(ctx.upstreamClient, upstream.name);
      // Without a session an upstream has no way to address messages to this client.
      if (!session?.sessionId) return undefined;
      const reply = await exchange({
        upstream,
        env: ctx.services.env,
        method: "GET",
        sessionId: session.sessionId,
        protocolVersion: session.protocolVersion,
        signal: ctx.signal,
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
          await ctx.emit(toClient(ctx.route, upstream.name, item.value));
        }
      } catch {
        // The client went away while a message was in flight; nothing to deliver it to.
      }
    }),
  );
}

/**
 * The stream of messages upstreams send outside any request (list_changed, resource
 * updates, server-to-client requests): each upstream's own stream, opened by the pool in
 * the client's upstream sessions (upstream/pool.ts, `listenToUpstream`) and merged. Each
 * message goes to `ctx.emit`, and the next is read only once the client's stream has
 * taken it.
 */
import { GatewayError } from "../core/errors";
import { poolRequest, type CallContext } from "../context/call-context";
import { listenToUpstream, upstreamMessages } from "../upstream/pool";
import { toClient } from "./forward";
import type { RelayTasks } from "./plugs";
import type { ListenFilter } from "../upstream/modern-listen";
import { describeFailure } from "../upstream/failures";

/** What a 2025 client's GET stream carries from a 2026-07-28 upstream: its list changes. */
const LIST_CHANGES: ListenFilter = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };

/**
 * Opens the route's upstream streams; calls `ctx.streamed` once one is open (405 when
 * none is), then relays until every stream ends or the client goes away.
 */
export async function listen(ctx: CallContext, tasks: RelayTasks): Promise<void> {
  const opened = await Promise.all(
    ctx.route.upstreams.map(async (upstream) => {
      // The session's own stream: a 2025 side's GET, or a 2026-07-28 side's subscriptions/listen standing in for it
      // (also for a stateless 2025 side of an upstream that speaks both: it has no stream of its own).
      const stream = await listenToUpstream(upstream, poolRequest(ctx), LIST_CHANGES);
      if (!stream) return undefined;
      if (!stream.ok) {
        if (stream.reason !== "http-status")
          console.warn(`mcp-edge-gateway: the stream of "${upstream.name}": ${describeFailure(stream)}`);
        return undefined;
      }
      return { upstream, reply: stream.value.reply };
    }),
  );
  const streams = opened.filter((entry) => entry !== undefined);
  if (streams.length === 0) {
    throw new GatewayError(
      405,
      -32000,
      "Method Not Allowed: no upstream of this session offers a server-to-client stream",
      undefined,
      null,
      { allow: "POST, DELETE" },
    );
  }
  ctx.streamed?.();
  await Promise.all(
    streams.map(async ({ upstream, reply }) => {
      try {
        for await (const item of upstreamMessages(reply, upstream.name)) {
          if (!item.ok || ctx.signal.aborted) break;
          // A listen stream's own end (its response) is not a message of the 2025 GET stream.
          if ("id" in item.value.message && !("method" in item.value.message)) break;
          await ctx.emit(await toClient(ctx, upstream.name, item.value, tasks));
        }
      } catch {
        // The client went away while a message was in flight; nothing to deliver it to.
      }
    }),
  );
}

/**
 * A client ended its session (the 2025 DELETE, a `{ kind: "end" }` message that passed
 * the whole pipeline, so it is traced, recorded and audited like any other): every
 * upstream session held for it on its route is closed with a DELETE of its own, the one
 * sealed at initialize and any opened later (upstream/pool.ts).
 */
import { poolRequest, type CallContext } from "../context/call-context";
import { exchange } from "../upstream/client";
import { laterSessions } from "../upstream/pool";
import { heldSession } from "../upstream/upstream-session";

/**
 * Closes the upstream sessions of the client of `ctx`, on every upstream of its route at once.
 *
 * @example
 * await endUpstreamSessions(ctx); // each upstream got DELETE with its Mcp-Session-Id
 */
export async function endUpstreamSessions(ctx: CallContext): Promise<void> {
  const pool = poolRequest(ctx);
  if (ctx.route.kind === "upstream") ctx.record.upstream = ctx.route.upstream.name;
  await Promise.all(
    ctx.route.upstreams.map(async (upstream) => {
      const sealed = heldSession(ctx.upstreamClient, upstream.name);
      const later = await laterSessions(upstream, pool);
      const sessions = [...(sealed ? [sealed] : []), ...later.filter((s) => s.sessionId !== sealed?.sessionId)];
      for (const session of sessions) {
        if (session.sessionId)
          await exchange({
            upstream,
            env: pool.env,
            method: "DELETE",
            sessionId: session.sessionId,
            protocolVersion: session.protocolVersion,
          });
      }
    }),
  );
}

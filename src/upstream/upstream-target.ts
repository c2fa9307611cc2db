/**
 * The upstream target of one call, resolved once where the call enters upstream work and
 * handed down: the upstream's configuration, the side (era) that serves this caller, that
 * side's transport, whether it keeps sessions, and the pool request carrying the caller's
 * credentials (whose own token is read once for the call: caller-credentials.ts). What
 * decides where the call goes (the call bridge, eras/call-bridge.ts) reads these facts;
 * nothing below re-derives them. A failed era discovery fails the call (era.ts).
 */
import { ok, type Result } from "../core/errors";
import type { UpstreamConfig } from "../config/upstreams";
import { upstreamEra } from "./era";
import { clientNeeds, sideFor, type UpstreamSide } from "./era-choice";
import type { UpstreamFailure } from "./failures";
import { upstreamSession } from "./pool";
import { sideTransport, transportOf } from "./select-transport";
import type { UpstreamTransport } from "./transport";
import { heldSession, type PoolRequest } from "./upstream-session";

/** Where one call goes upstream, and as whom. */
export type UpstreamTarget = {
  readonly upstream: UpstreamConfig;
  /** The side that serves the caller (era-choice.ts), or the one its held session was opened on. */
  readonly side: UpstreamSide;
  readonly transport: UpstreamTransport;
  /**
   * The side keeps sessions (a 2025 side that named an `Mcp-Session-Id`); false for a
   * 2026-07-28 side and a stateless 2025 one; undefined while no handshake has shown it.
   */
  readonly sessionful: boolean | undefined;
  /** What the pool needs of the call, its caller's credentials included. */
  readonly request: PoolRequest;
};

/**
 * The target of a call of `request`'s client at `upstream`: from the session the client
 * holds with it (sealed at initialize), else from what discovery learned of the upstream.
 *
 * @example
 * const target = await upstreamTarget(upstream, poolRequest(ctx));
 * if (!target.ok) throw failureError(target, env);
 */
export async function upstreamTarget(
  upstream: UpstreamConfig,
  request: PoolRequest,
): Promise<Result<UpstreamTarget, UpstreamFailure>> {
  const held = heldSession(request.session, upstream.name);
  if (held) {
    const transport = transportOf(held);
    const sessionful = transport.side === "legacy" && held.sessionId !== null;
    return ok({ upstream, side: transport.side, transport, sessionful, request });
  }
  const era = await upstreamEra(upstream, request);
  if (!era.ok) return era;
  const side = sideFor(clientNeeds(request), era.value);
  const known = era.value.era === "legacy" ? era.value.sessionful : era.value.legacy?.sessionful;
  return ok({ upstream, side, transport: sideTransport(side), sessionful: side === "legacy" ? known : false, request });
}

/**
 * `target` with whether its 2025 side keeps sessions known: when no handshake had shown it,
 * the client's own session with the upstream (the pool's: made now if need be, and then the
 * one the call is sent in) shows it.
 *
 * @example
 * const known = await withSessionsKnown(target);
 * if (known.ok && known.value.sessionful === false) ...; // answered in the shared session
 */
export async function withSessionsKnown(target: UpstreamTarget): Promise<Result<UpstreamTarget, UpstreamFailure>> {
  if (target.sessionful !== undefined) return ok(target);
  const session = await upstreamSession(target.upstream, target.request);
  if (!session.ok) return session;
  return ok({ ...target, sessionful: session.value.sessionId !== null });
}

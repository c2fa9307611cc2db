/**
 * Picks the transport (transport.ts) of a call: from the upstream session it runs in, or,
 * for a client that keeps none, by the rule of era-choice.ts over what discovery learned;
 * and the one a session's stream of messages outside requests comes from.
 */
import { ok, type Result } from "../core/errors";
import type { UpstreamConfig } from "../config/upstreams";
import { upstreamEra } from "./era";
import { clientNeeds, sideFor, type UpstreamSide } from "./era-choice";
import { legacyTransport } from "./legacy-transport";
import { modernTransport } from "./modern-transport";
import { MODERN_UPSTREAM_VERSION } from "./modern-wire";
import type { UpstreamFailure } from "./failures";
import type { UpstreamTransport } from "./transport";
import type { PoolRequest, UpstreamSession } from "./upstream-session";

const TRANSPORTS: Readonly<Record<UpstreamSide, UpstreamTransport>> = {
  legacy: legacyTransport,
  modern: modernTransport,
};

/**
 * The transport that speaks to `side` of an upstream.
 *
 * @example
 * sideTransport("modern").asks; // "input-required"
 */
export function sideTransport(side: UpstreamSide): UpstreamTransport {
  return TRANSPORTS[side];
}

/**
 * The transport of an upstream session: the session was opened on the side the rule chose,
 * and its protocol version says which.
 *
 * @example
 * const reply = await transportOf(session).send(upstream, text, request, session, {});
 */
export function transportOf(session: Pick<UpstreamSession, "protocolVersion">): UpstreamTransport {
  return TRANSPORTS[session.protocolVersion === MODERN_UPSTREAM_VERSION ? "modern" : "legacy"];
}

/**
 * The transport whose stream of messages outside requests a client's `session` listens
 * to: the session's own, except that a 2025 side without sessions has no stream to give
 * (it cannot address anything to a client), so an upstream that also speaks 2026-07-28
 * streams through its `subscriptions/listen` instead.
 *
 * @example
 * const stream = await (await streamTransportFor(upstream, request, session)).listen(upstream, request, session, filter);
 */
export async function streamTransportFor(
  upstream: UpstreamConfig,
  request: PoolRequest,
  session: UpstreamSession,
): Promise<UpstreamTransport> {
  const own = transportOf(session);
  if (own.side === "modern" || session.sessionId) return own;
  const era = await upstreamEra(upstream, request);
  return era.ok && era.value.era === "modern" ? modernTransport : own;
}

/**
 * The transport that serves the client of `request` at `upstream`, by the rule of
 * era-choice.ts over what discovery learned (remembered: a map lookup once known). A failed
 * discovery is the call's failure (era.ts says what to check), never a guess.
 *
 * @example
 * const transport = await transportFor(upstream, request);
 * if (transport.ok && transport.value.side === "modern") ...;
 */
export async function transportFor(
  upstream: UpstreamConfig,
  request: PoolRequest,
): Promise<Result<UpstreamTransport, UpstreamFailure>> {
  const era = await upstreamEra(upstream, request);
  return era.ok ? ok(TRANSPORTS[sideFor(clientNeeds(request), era.value)]) : era;
}

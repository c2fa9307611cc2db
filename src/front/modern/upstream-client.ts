/**
 * The upstream side of a modern client. A 2026-07-28 client keeps no session, but the
 * 2025 upstreams behind the gateway need one: the gateway holds one per principal,
 * route and capability set (less what cannot be bridged), under a key derived from the three, so every request of the
 * same client (on any isolate) continues in the same upstream session and no request
 * pays for a handshake once the first has made it (upstream/pool.ts keeps them in
 * isolate memory and in KV).
 */
import { canonicalDigest } from "../../core/canonical-json";
import type { JsonObject } from "../../core/jsonrpc";
import type { UpstreamClient } from "../../upstream/upstream-session";
import { UPSTREAM_PROTOCOL_VERSION } from "./protocol";

/** How long the gateway keeps a modern client's upstream sessions after it made them. */
export const MODERN_UPSTREAM_SESSION_TTL_S = 24 * 60 * 60;
/** Keys start with this, so a modern client's key never collides with a 2025 session id. */
const KEY_PREFIX = "m1.";

/**
 * Capabilities that invite a 2025 upstream to ask the client something mid-call
 * (sampling, elicitation, roots). Declared upstream on a modern client's behalf only when
 * the gateway can bridge the question (eras/call-bridge.ts: the BRIDGED_CALLS binding);
 * otherwise left out, so an upstream skips what it can do without them, or answers that
 * it needs them, instead of asking a question no one will answer.
 */
const BRIDGED_CAPABILITIES: ReadonlySet<string> = new Set(["sampling", "elicitation", "roots"]);

function forwardedCapabilities(capabilities: JsonObject, bridging: boolean): JsonObject {
  return bridging
    ? capabilities
    : Object.fromEntries(Object.entries(capabilities).filter(([key]) => !BRIDGED_CAPABILITIES.has(key)));
}

/**
 * The `UpstreamClient` of a modern request. The expiry is rounded to a day boundary so
 * it is the same for every request of the day (what the pool stores is keyed by it).
 *
 * @example
 * const client = await modernUpstreamClient({ principal: "anonymous", route: "", clientCapabilities: {}, clientInfo: {} });
 */
export async function modernUpstreamClient(
  input: {
    principal: string;
    route: string;
    clientCapabilities: JsonObject;
    clientInfo: JsonObject;
    bridging?: boolean;
  },
  nowS = Math.floor(Date.now() / 1000),
): Promise<UpstreamClient> {
  const period = Math.floor(nowS / MODERN_UPSTREAM_SESSION_TTL_S);
  const clientCapabilities = forwardedCapabilities(input.clientCapabilities, input.bridging === true);
  const sid = KEY_PREFIX + (await canonicalDigest([input.principal, input.route, clientCapabilities, period]));
  return {
    sid,
    protocolVersion: UPSTREAM_PROTOCOL_VERSION,
    clientCapabilities,
    clientInfo: input.clientInfo,
    upstreams: {},
    exp: (period + 2) * MODERN_UPSTREAM_SESSION_TTL_S,
  };
}

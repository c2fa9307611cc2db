/**
 * Which side of an upstream serves a client: the one rule of the era matrix. Through the
 * gateway a client of either era gets what the upstream offers to any era, natively where
 * the upstream speaks the client's era, bridged only where it does not:
 *
 * | client    | upstream offers                        | side     | how                                   |
 * |-----------|----------------------------------------|----------|---------------------------------------|
 * | 2025      | 2025 only                              | 2025     | native                                |
 * | 2025      | sessionful 2025 + 2026-07-28           | 2025     | native: sampling, elicitation, roots, subscriptions |
 * | 2025      | stateless 2025 + 2026-07-28, client answers questions | 2026 | input bridge (a stateless 2025 side cannot ask) |
 * | 2025      | stateless 2025 + 2026-07-28, client answers none      | 2025 | native                      |
 * | 2025      | 2026-07-28 only                        | 2026     | input bridge                          |
 * | 2026-07-28| a 2026-07-28 side                      | 2026     | native                                |
 * | 2026-07-28| 2025 only                              | 2025     | call bridge                           |
 *
 * "Answers questions": the client declared sampling, elicitation or roots. An operator's
 * `protocol` in UPSTREAMS pins the upstream to one side before this rule (era.ts).
 */
import { isObject, type JsonObject } from "../core/jsonrpc";
import { isStatelessRevision } from "../core/revisions";
import type { UpstreamEra } from "./era";
import type { PoolRequest } from "./upstream-session";

/** The side of an upstream a call goes to: its 2025 (session) side or its 2026-07-28 (stateless) side. */
export type UpstreamSide = "legacy" | "modern";

/** What the rule needs of the client. */
export type ClientNeeds = {
  /** The client speaks 2026-07-28. */
  readonly modern: boolean;
  /** It declared a capability a server asks through (sampling, elicitation, roots). */
  readonly answersQuestions: boolean;
};

/** The client capabilities through which a server asks the client something mid-call. */
const QUESTION_CAPABILITIES = ["sampling", "elicitation", "roots"] as const;

/**
 * The side of an upstream that serves `client` (the table above).
 *
 * @example
 * sideFor({ modern: false, answersQuestions: true }, { era: "modern", discover: {}, legacy: { sessionful: false, capabilities: {} } }); // "modern"
 */
export function sideFor(client: ClientNeeds, upstream: UpstreamEra): UpstreamSide {
  if (upstream.era === "legacy") return "legacy";
  if (client.modern || upstream.legacy === undefined) return "modern";
  if (upstream.legacy.sessionful) return "legacy";
  return client.answersQuestions ? "modern" : "legacy";
}

/**
 * What the rule needs of the client a pool request acts for: its own revision (the
 * version its upstream sessions are opened in when it does not say) and its capabilities.
 *
 * @example
 * clientNeeds({ env, session: client, clientVersion: "2025-11-25" }); // { modern: false, answersQuestions: ... }
 */
export function clientNeeds(request: Pick<PoolRequest, "session" | "clientVersion">): ClientNeeds {
  const capabilities: JsonObject = request.session.clientCapabilities;
  return {
    modern: isStatelessRevision(request.clientVersion ?? request.session.protocolVersion),
    answersQuestions: QUESTION_CAPABILITIES.some((key) => isObject(capabilities[key])),
  };
}

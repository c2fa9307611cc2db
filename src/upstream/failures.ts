/**
 * Where expected upstream failures meet the wire: the tagged `UpstreamFailure` (one of the
 * gateway's typed failures, core/failures.ts) carried to the client as a `GatewayFailure`.
 * The message names the upstream and what to check; the other upstreams keep working.
 */
import { GatewayFailure, type UpstreamFailure } from "../core/failures";
import { redactSecrets } from "../config/secrets";

export { describeFailure, UPSTREAM_ERROR, type UpstreamFailure } from "../core/failures";

/**
 * The boundary error for a failed upstream exchange. Its message never holds a configured
 * secret's value (`env` says which those are), whatever an upstream put in the failure.
 */
export function failureError(failure: UpstreamFailure, env: Readonly<Record<string, unknown>>): GatewayFailure {
  return new GatewayFailure(failure, null, "legacy", (text) => redactSecrets(text, env));
}

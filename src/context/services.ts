/**
 * The services of a call, typed once from the Worker's bindings: parsed configuration,
 * KV, R2, the audit Queue and the session secret. Layers below the shell never read a binding by name.
 */
import { gatewayConfig } from "../config/gateway-config";
import { sessionSecret } from "../config/secrets";
import type { Services } from "./call-context";

/**
 * The services these bindings provide. The session secret is checked when first used, so
 * a request that fails earlier (a bad header) keeps its own error.
 */
export function servicesFor(env: Readonly<Record<string, unknown>>): Services {
  return {
    config: gatewayConfig(env),
    kv: env["GATEWAY_KV"] as KVNamespace | undefined,
    payloads: env["PAYLOADS"] as R2Bucket | undefined,
    auditQueue: env["AUDIT_QUEUE"] as Queue | undefined,
    ...(env["INPUT_RENDEZVOUS"] ? { inputRendezvous: env["INPUT_RENDEZVOUS"] as DurableObjectNamespace } : {}),
    ...(env["BRIDGED_CALLS"] !== undefined ? { bridgedCalls: env["BRIDGED_CALLS"] as DurableObjectNamespace } : {}),
    get sessionSecret() {
      return sessionSecret(env);
    },
    env,
  };
}

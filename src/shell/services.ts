/**
 * The services of a call, typed once from the Worker's bindings: parsed configuration,
 * KV, R2, the audit Queue, the Durable Objects, the rate limiters and the session secret.
 * The shell is the only place that reads a binding by its name; layers below get these
 * typed values (`Services`, context/call-context.ts).
 */
import { gatewayConfig } from "../config/gateway-config";
import { sessionSecret } from "../config/secrets";
import type { EmbeddingsBinding, RateLimiter, Services } from "../context/call-context";
import type { BridgedCallRpc, CallApprovalRpc, InputRendezvousRpc, ObjectNamespace } from "../context/object-rpc";

/** The bindings this module reads, as wrangler.toml declares them. */
type GatewayBindings = {
  readonly GATEWAY_KV?: KVNamespace;
  readonly PAYLOADS?: R2Bucket;
  readonly AUDIT_QUEUE?: Queue;
  /** Namespaces of shell/input-rendezvous.ts and shell/bridged-call.ts, whose classes implement these surfaces. */
  readonly INPUT_RENDEZVOUS?: ObjectNamespace<InputRendezvousRpc>;
  readonly BRIDGED_CALLS?: ObjectNamespace<BridgedCallRpc>;
  /** Calls held for approval (features/approvals/call-approval.ts). */
  readonly APPROVALS?: ObjectNamespace<CallApprovalRpc>;
};

function isEmbeddings(value: unknown): value is EmbeddingsBinding {
  return typeof value === "object" && value !== null && typeof (value as { run?: unknown }).run === "function";
}

function isRateLimiter(value: unknown): value is RateLimiter {
  return typeof value === "object" && value !== null && typeof (value as { limit?: unknown }).limit === "function";
}

/**
 * The services these bindings provide. The session secret is checked when first used, so
 * a request that fails earlier (a bad header) keeps its own error.
 */
export function servicesFor(env: Readonly<Record<string, unknown>>): Services {
  // The same env object (every request of an isolate) gives the same services: built once.
  let services = built.get(env);
  if (!services) {
    services = buildServices(env);
    built.set(env, services);
  }
  return services;
}

/** The services built for each env object this isolate has seen. */
const built = new WeakMap<object, Services>();

function buildServices(env: Readonly<Record<string, unknown>>): Services {
  // The platform hands bindings untyped; wrangler.toml is what says what each name holds.
  const bindings = env as GatewayBindings;
  return {
    // Read per call: the live upstreams joined to UPSTREAMS change without a new env.
    get config() {
      return gatewayConfig(env);
    },
    kv: bindings.GATEWAY_KV,
    payloads: bindings.PAYLOADS,
    auditQueue: bindings.AUDIT_QUEUE,
    ...(bindings.INPUT_RENDEZVOUS ? { inputRendezvous: bindings.INPUT_RENDEZVOUS } : {}),
    ...(bindings.BRIDGED_CALLS !== undefined ? { bridgedCalls: bindings.BRIDGED_CALLS } : {}),
    ...(bindings.APPROVALS !== undefined ? { approvals: bindings.APPROVALS } : {}),
    ...(isEmbeddings(env["AI"]) ? { embeddings: env["AI"] } : {}),
    rateLimiter: (name) => {
      const binding = Object.hasOwn(env, name) ? env[name] : undefined;
      return isRateLimiter(binding) ? binding : undefined;
    },
    get sessionSecret() {
      return sessionSecret(env);
    },
    env,
  };
}

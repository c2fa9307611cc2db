/**
 * The pipeline (part of the composition root: nothing in src/ imports it but src/gateway.ts):
 * the middleware order, outermost first, in one place, built once per
 * configuration (middleware take their options from it, never from raw vars). Every
 * client message goes through it, whatever its kind and protocol era (see
 * context/call-context.ts, `ClientMessage`).
 *
 * A response travels from the relay outwards, so the list reads backwards for results:
 * output filters shape a result first, then offload sees the filtered size and stores
 * the filtered data, and the gateway's own tools answer before anything is forwarded.
 * Task results, which no filter can be chosen for, are withheld where a set may apply.
 * Trace context comes first, so every layer and the audit event see the same trace;
 * client logging next, so it reports what every layer inside decided. Visibility,
 * authorization, client notifications (what means nothing upstream is dropped) and rate
 * limits come before anything answers or forwards.
 * Rules append their guidance to the final result (filtered, or offload's envelope);
 * icons and text overrides shape the upstreams' lists (the gateway's own tools are
 * appended outside them, by sys-tools). Pinned lists sit inside them and inside the
 * output filters (which remove a filtered tool's `outputSchema`): pins judge the upstreams'
 * own definitions, and what they let through is then shaped like any other. Pinned calls
 * are checked where they always were, before offload and the filters see them.
 * Guardrails sit innermost, next to the relay: they read the arguments as the upstream gets
 * them and the result as it sent it, before filters shape it and offload stores it; the
 * schemas their redaction could break are withheld beside the output filters'.
 */
import type { GatewayConfig } from "./config/gateway-config";
import type { Handler, Middleware } from "./context/call-context";
import { authorization } from "./features/personas/authorization";
import { clientLogging } from "./features/shaping/client-logging";
import { icons } from "./features/shaping/icons";
import { offload } from "./features/offload/offload";
import { pinnedLists, pinning } from "./features/pins/pinning";
import { rateLimit } from "./features/personas/rate-limit";
import { clientNotifications } from "./pipeline/client-notifications";
import { rules } from "./features/shaping/rules";
import { textOverrides } from "./features/shaping/text-overrides";
import { visibility } from "./features/personas/visibility";
import { outputFilters } from "./features/filters/output-filters";
import { sysTools } from "./features/offload/sys-tools";
import { taskResults } from "./features/tasks/task-results";
import { createRelay } from "./relay/index";
import { askToSignIn } from "./features/upstream-sign-in/sign-in-required";
import { composeMiddleware } from "./pipeline/compose";
import { classifyTargets } from "./pipeline/call-targets";
import { recordCalls, type CallObserver } from "./pipeline/record-calls";
import type { PipelineOptions } from "./pipeline/options";
import { auditTrail } from "./features/audit/audit-trail";
import { traceContext } from "./pipeline/trace-context";
import { upstreamHealth } from "./pipeline/upstream-health";
import { catalogModes } from "./features/catalog/catalog-modes";
import { codeMode } from "./features/code-mode/code-mode";
import { guardrails, redactedSchemas } from "./features/guardrails/middleware";
import { approvalGate } from "./features/approvals/routes";
import { namedServers } from "./features/named-servers/serve";

export type { CallObserver };

/** The middleware of a configuration, outermost first. */
export function methodMiddleware(config: GatewayConfig): readonly Middleware[] {
  const cacheTtlMs = config.documentCacheTtlMs;
  // An invalid AUTH never reaches the pipeline (the shell refuses the request); "missing" does not either.
  const auth = config.auth.ok ? config.auth.value : ({ mode: "missing" } as const);
  return [
    traceContext(),
    clientLogging(),
    visibility({ cacheTtlMs }),
    authorization({ auth }),
    clientNotifications(),
    rateLimit({ auth }),
    sysTools({ offloadDefaults: config.offload, cacheTtlMs }),
    icons({ cacheTtlMs }),
    textOverrides({ cacheTtlMs }),
    rules({ cacheTtlMs }),
    pinning({ cacheTtlMs }),
    offload({ defaults: config.offload, cacheTtlMs }),
    outputFilters({ cacheTtlMs }),
    redactedSchemas({ cacheTtlMs }),
    pinnedLists({ cacheTtlMs, audit: config.audit.enabled }),
    taskResults({ cacheTtlMs }),
    guardrails({ cacheTtlMs, approvals: approvalGate }),
  ];
}

/** The relay, with the sign-in prompt of upstreams that act as each user around its upstream work. */
const relay = createRelay(askToSignIn);

/** Observers every pipeline has: upstream health, measured on real traffic. */
const DEFAULT_OBSERVERS: readonly CallObserver[] = [upstreamHealth];

/**
 * The whole pipeline for a configuration: the catalog modes (features/catalog/catalog-modes.ts:
 * a call through `sys___call_tool` enters everything below as a direct call), the audit
 * trail (when on), the record layer, the middleware, the relay. Audit wraps the record layer rather than sitting in the
 * list: it needs the completed record (bytes to the client, duration) and the answer the
 * client got, and must see where each message begins and ends to send one request's
 * events in one batch.
 *
 * @example
 * const handle = buildPipeline(gatewayConfig(env), { observers: [(record) => console.log(record)] });
 */
export function buildPipeline(
  config: GatewayConfig,
  { arrange = (list) => list, observers = [] }: PipelineOptions = {},
): Handler {
  const observe = (handler: Handler): Handler => {
    const recorded = recordCalls(handler, [...DEFAULT_OBSERVERS, ...observers]);
    return config.audit.enabled ? auditTrail(recorded, { config: config.audit }) : recorded;
  };
  const auth = config.auth.ok ? config.auth.value : ({ mode: "missing" } as const);
  const inner = classifyTargets(observe(composeMiddleware(arrange(methodMiddleware(config)), relay)));
  // Named servers sit inside the catalog modes: a search ranks, and sys___call_tool calls, a server's own names.
  return catalogModes(namedServers(inner, { cacheTtlMs: config.documentCacheTtlMs }), {
    auth,
    observe,
    codeMode: codeMode({ offloadDefaults: config.offload, cacheTtlMs: config.documentCacheTtlMs }),
  });
}

const built = new WeakMap<GatewayConfig, Handler>();

/** The default pipeline of a configuration, built once per configuration per isolate. */
export function pipelineFor(config: GatewayConfig): Handler {
  let handler = built.get(config);
  if (!handler) {
    handler = buildPipeline(config);
    built.set(config, handler);
  }
  return handler;
}

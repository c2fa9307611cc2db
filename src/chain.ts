/**
 * The pipeline (part of the composition root: nothing in src/ imports it but src/gateway.ts):
 * the middleware order, outermost first, in one place, built once per
 * configuration (middleware take their options from it, never from raw vars). Every
 * client message goes through it, whatever its kind and protocol era (see
 * context/call-context.ts, `ClientMessage`), but only through the layers declared for its
 * method or kind: each entry says which (pipeline/compose.ts builds one chain per method),
 * so this list is also the table of what a `tools/call` goes through. The order below is
 * kept in every chain; docs/development.md prints each method's chain.
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
import { SHAPED_LISTS } from "./pipeline/list-items";
import { authorization } from "./features/personas/authorization";
import { clientLogging } from "./features/shaping/client-logging";
import { icons } from "./features/shaping/icons";
import { offload } from "./features/offload/offload";
import { pinnedLists, pinning } from "./features/pins/pinning";
import { rateLimit } from "./features/personas/rate-limit";
import { clientNotifications } from "./pipeline/client-notifications";
import { rules } from "./features/shaping/rules";
import { OVERRIDDEN_METHODS, textOverrides } from "./features/shaping/text-overrides";
import { visibility } from "./features/personas/visibility";
import { outputFilters } from "./features/filters/output-filters";
import { loadPlan } from "./features/filters/filter-store";
import type { PlanOffload } from "./features/offload/offload-settings";
import { SYS_TOOL_METHODS, sysToolCalls, sysTools } from "./features/offload/sys-tools";
import { taskResults } from "./features/tasks/task-results";
import { relayTasks } from "./features/tasks/tasks";
import { createRelay } from "./relay/index";
import { askToSignIn } from "./features/upstream-sign-in/sign-in-required";
import { composeChains, EVERY, EVERY_MESSAGE, type Chains, type Handles, type Layer } from "./pipeline/compose";
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

/** The plan's `offload` override, read from the filters' store: offload takes it as an option, never importing filters. */
const planOffload: PlanOffload = async (kv, cacheTtlMs) => {
  const plan = await loadPlan(kv, cacheTtlMs);
  return plan.state === "valid" ? plan.value.offload : undefined;
};

/** A layer of the list below. */
const layer = (name: string, handles: Handles, wrap: Middleware): Layer => ({ name, handles, wrap });

/**
 * The middleware of a configuration, outermost first, each with the messages it handles:
 * this list is the table of which layers a method goes through (docs/development.md,
 * "What a message goes through", prints it per method).
 */
export function methodLayers(config: GatewayConfig): readonly Layer[] {
  const cacheTtlMs = config.documentCacheTtlMs;
  // An invalid AUTH never reaches the pipeline (the shell refuses the request); "missing" does not either.
  const auth = config.auth.ok ? config.auth.value : ({ mode: "missing" } as const);
  const toolLists = ["tools/list"];
  const toolCalls = ["tools/call"];
  return [
    layer("trace context", { requests: EVERY }, traceContext()),
    layer("client logging", { requests: ["logging/setLevel", ...toolCalls] }, clientLogging()),
    layer("visibility", { requests: toolLists }, visibility({ cacheTtlMs })),
    layer("authorization", { requests: EVERY, notifications: EVERY, listen: true }, authorization({ auth })),
    layer("client notifications", { requests: EVERY, notifications: EVERY, listen: true }, clientNotifications()),
    layer("rate limit", { requests: EVERY, notifications: EVERY }, rateLimit({ auth })),
    layer("sys tools", { requests: toolCalls }, sysToolCalls()),
    layer(
      "sys tools",
      { requests: SYS_TOOL_METHODS },
      sysTools({ offloadDefaults: config.offload, cacheTtlMs, planOffload }),
    ),
    layer("icons", { requests: [...SHAPED_LISTS.keys()] }, icons({ cacheTtlMs })),
    layer("text overrides", { requests: OVERRIDDEN_METHODS }, textOverrides({ cacheTtlMs })),
    layer("rules", { requests: toolCalls }, rules({ cacheTtlMs })),
    layer("pinning", { requests: [...toolCalls, "prompts/get"] }, pinning({ cacheTtlMs })),
    layer("offload", { requests: toolCalls }, offload({ defaults: config.offload, cacheTtlMs, planOffload })),
    layer(
      "output filters",
      { requests: [...toolCalls, ...toolLists, "subscriptions/listen"], listen: true },
      outputFilters({ cacheTtlMs }),
    ),
    layer("redacted schemas", { requests: toolLists }, redactedSchemas({ cacheTtlMs })),
    layer(
      "pinned lists",
      { requests: [...toolLists, "prompts/list"] },
      pinnedLists({ cacheTtlMs, audit: config.audit.enabled }),
    ),
    layer("task results", { requests: ["tasks/result"] }, taskResults({ cacheTtlMs })),
    layer("guardrails", { requests: toolCalls }, guardrails({ cacheTtlMs, approvals: approvalGate })),
  ];
}

/** The relay, with the sign-in prompt of upstreams that act as each user around its upstream work, and tasks. */
const relay = createRelay(askToSignIn, relayTasks);

/** Observers every pipeline has: upstream health, measured on real traffic. */
const DEFAULT_OBSERVERS: readonly CallObserver[] = [upstreamHealth];

/**
 * The whole pipeline for a configuration, as chains that can say what each message goes
 * through: the catalog modes (features/catalog/catalog-modes.ts: a call through
 * `sys___call_tool` enters everything below as a direct call), the named servers, the call
 * targets' classifier, the audit trail (when on), the record layer, then the middleware
 * (its own chain per method) and the relay. Audit wraps the record layer rather than sitting
 * in the list: it needs the completed record (bytes to the client, duration) and the answer
 * the client got, and must see where each message begins and ends to send one request's
 * events in one batch. Every layer below the catalog modes in this outer stage handles every
 * request, so what the catalog modes send inward (a search's lists, a found tool's call) takes
 * the path a client's own request of that method takes.
 *
 * @example
 * const { layersOf } = buildChains(gatewayConfig(env));
 * layersOf({ kind: "request", method: "prompts/get" }); // ["named servers", "call targets", "record", ...]
 */
export function buildChains(
  config: GatewayConfig,
  { arrange = (list) => list, observers = [] }: PipelineOptions = {},
): Chains {
  const watching = [...DEFAULT_OBSERVERS, ...observers];
  const observe = (handler: Handler): Handler => {
    const recorded = recordCalls(handler, watching);
    return config.audit.enabled ? auditTrail(recorded, { config: config.audit }) : recorded;
  };
  const auth = config.auth.ok ? config.auth.value : ({ mode: "missing" } as const);
  const cacheTtlMs = config.documentCacheTtlMs;
  const codeModeTools = codeMode({ offloadDefaults: config.offload, cacheTtlMs, planOffload });
  const middleware = composeChains(arrange(methodLayers(config)), relay);
  const outer = composeChains(
    [
      layer("catalog modes", { requests: ["tools/list", "tools/call"] }, (next) =>
        catalogModes(next, { auth, observe, codeMode: codeModeTools }),
      ),
      // Named servers sit inside the catalog modes: a search ranks, and sys___call_tool calls, a server's own names.
      layer("named servers", { requests: EVERY }, (next) => namedServers(next, { cacheTtlMs })),
      layer("call targets", EVERY_MESSAGE, classifyTargets),
      ...(config.audit.enabled
        ? [layer("audit trail", EVERY_MESSAGE, (next) => auditTrail(next, { config: config.audit }))]
        : []),
      layer("record", EVERY_MESSAGE, (next) => recordCalls(next, watching)),
    ],
    middleware.handle,
  );
  return {
    handle: outer.handle,
    layersOf: (key) => [...outer.layersOf(key), ...middleware.layersOf(key), "relay"],
  };
}

/** The pipeline of a configuration (see {@link buildChains}). */
export function buildPipeline(config: GatewayConfig, options: PipelineOptions = {}): Handler {
  return buildChains(config, options).handle;
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

/**
 * The pipeline: the middleware order, outermost first, in one place, built once per
 * configuration (middleware take their options from it, never from raw vars).
 *
 * A response travels from the relay outwards, so the list reads backwards for results:
 * output filters shape a result first, then offload sees the filtered size and stores
 * the filtered data, and the gateway's own tools answer before anything is forwarded.
 * Task results, which no filter can be chosen for, are withheld where a set may apply.
 * Later layers (visibility, authorization, rate limits, audit) go in front, in that order.
 */
import type { GatewayConfig } from "../config/gateway-config";
import type { MethodHandler, Middleware } from "../context/call-context";
import { offload } from "../middleware/offload";
import { outputFilters } from "../middleware/output-filters";
import { sysTools } from "../middleware/sys-tools";
import { taskResults } from "../middleware/task-results";
import { relay } from "../relay/relay";
import { composeMiddleware } from "./compose";

/** The middleware of a configuration, outermost first. */
export function methodMiddleware(config: GatewayConfig): readonly Middleware[] {
  const cacheTtlMs = config.documentCacheTtlMs;
  return [sysTools({ offloadDefaults: config.offload, cacheTtlMs }), offload({ defaults: config.offload, cacheTtlMs }), outputFilters({ cacheTtlMs }), taskResults({ cacheTtlMs })];
}

const built = new WeakMap<GatewayConfig, MethodHandler>();

/** The whole pipeline for a configuration, middleware around the relay; built once per configuration. */
export function pipelineFor(config: GatewayConfig): MethodHandler {
  let handler = built.get(config);
  if (!handler) {
    handler = composeMiddleware(methodMiddleware(config), relay);
    built.set(config, handler);
  }
  return handler;
}

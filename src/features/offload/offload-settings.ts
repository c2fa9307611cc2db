/**
 * The offload settings of one call: the configured defaults (the OFFLOAD var over the
 * built-in ones), then the plan's `offload` in KV, which an operator edits live.
 */
import { loadPlan } from "../filters/filter-store";
import type { OffloadConfig } from "../../config/offload-override";

/**
 * @example
 * const settings = await offloadSettings(ctx.services.kv, config.offload, config.documentCacheTtlMs);
 */
export async function offloadSettings(
  kv: KVNamespace | undefined,
  defaults: OffloadConfig,
  cacheTtlMs: number,
): Promise<OffloadConfig> {
  const plan = kv ? await loadPlan(kv, cacheTtlMs) : undefined;
  return plan?.state === "valid" ? { ...defaults, ...plan.value.offload } : defaults;
}

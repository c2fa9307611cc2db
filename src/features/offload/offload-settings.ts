/**
 * The offload settings of one call: the configured defaults (the OFFLOAD var over the
 * built-in ones), then the plan's `offload` in KV, which an operator edits live. The plan
 * belongs to the filters feature, so its override comes through a {@link PlanOffload} that
 * the composition root (src/chain.ts) builds from the filters' store: offload never imports
 * filters (filters import offload's checker, one direction only).
 */
import type { OffloadConfig } from "./offload-override";

/** Reads the live plan's `offload` override (undefined when there is none or the plan is invalid). */
export type PlanOffload = (kv: KVNamespace, cacheTtlMs: number) => Promise<Partial<OffloadConfig> | undefined>;

/**
 * @example
 * const settings = await offloadSettings(ctx.services.kv, config.offload, config.documentCacheTtlMs, planOffload);
 */
export async function offloadSettings(
  kv: KVNamespace | undefined,
  defaults: OffloadConfig,
  cacheTtlMs: number,
  planOffload: PlanOffload,
): Promise<OffloadConfig> {
  const override = kv ? await planOffload(kv, cacheTtlMs) : undefined;
  return override ? { ...defaults, ...override } : defaults;
}

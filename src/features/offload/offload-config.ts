/**
 * When a result is offloaded to R2, and what the client gets in its place: threshold,
 * preview length, which tools, how long payloads live. Defaults here; the `OFFLOAD`
 * var (JSON) overrides them per deployment and the plan's `offload` in KV per running
 * gateway.
 */
import { DEFAULT_PAYLOAD_TTL_S } from "../../storage/payload-store";
import { checkOffloadOverride, type OffloadConfig } from "./offload-override";

export const DEFAULT_OFFLOAD_THRESHOLD_BYTES = 512 * 1024;
export const DEFAULT_PREVIEW_CHARS = 500;

export const DEFAULT_OFFLOAD: OffloadConfig = {
  thresholdBytes: DEFAULT_OFFLOAD_THRESHOLD_BYTES,
  previewChars: DEFAULT_PREVIEW_CHARS,
  include: ["*"],
  exclude: [],
  ttlSeconds: DEFAULT_PAYLOAD_TTL_S,
};

const parsedVars = new Map<string, Partial<OffloadConfig>>();

/** The deployment's config: defaults with the `OFFLOAD` var on top (an invalid var is logged and ignored). */
export function offloadFromVar(raw: unknown): Partial<OffloadConfig> {
  if (raw === undefined || raw === "") return {};
  const key = typeof raw === "string" ? raw : JSON.stringify(raw);
  let parsed = parsedVars.get(key);
  if (!parsed) {
    let value: unknown = raw;
    try {
      if (typeof raw === "string") value = JSON.parse(raw);
    } catch {
      value = undefined;
    }
    const checked = checkOffloadOverride(value, "OFFLOAD");
    if (!checked.config)
      console.error(
        `mcp-edge-gateway: the OFFLOAD var is invalid and ignored: ${checked.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`,
      );
    parsed = checked.config ?? {};
    parsedVars.set(key, parsed);
  }
  return parsed;
}

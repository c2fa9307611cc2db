/**
 * When a result is offloaded to R2, and what the client gets in its place: threshold,
 * preview length, which tools, how long payloads live. Defaults here; the `OFFLOAD`
 * var (JSON) overrides them per deployment and the plan's `offload` in KV per running
 * gateway.
 */
import { isObject } from "../../core/jsonrpc";
import { DEFAULT_PAYLOAD_TTL_S } from "../../storage/payload-store";
import type { DocumentProblem } from "../../storage/document-store";

export const DEFAULT_OFFLOAD_THRESHOLD_BYTES = 512 * 1024;
export const DEFAULT_PREVIEW_CHARS = 500;
const MAX_PAYLOAD_TTL_S = 30 * 24 * 60 * 60;

export type OffloadConfig = {
  /** Results larger than this (bytes of the JSON-RPC response) are offloaded. */
  readonly thresholdBytes: number;
  readonly previewChars: number;
  /** `<upstream>___<tool>` globs; a tool is offloaded when it matches an include and no exclude. */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  /** How long a payload can be read back. */
  readonly ttlSeconds: number;
};

export const DEFAULT_OFFLOAD: OffloadConfig = {
  thresholdBytes: DEFAULT_OFFLOAD_THRESHOLD_BYTES,
  previewChars: DEFAULT_PREVIEW_CHARS,
  include: ["*"],
  exclude: [],
  ttlSeconds: DEFAULT_PAYLOAD_TTL_S,
};

const LIMITS: Record<"thresholdBytes" | "previewChars" | "ttlSeconds", [number, number]> = {
  thresholdBytes: [1, 100 * 1024 * 1024],
  previewChars: [0, 100_000],
  ttlSeconds: [60, MAX_PAYLOAD_TTL_S],
};

/** Checks an override (a partial config); problems are located under `at`. */
export function checkOffloadOverride(value: unknown, at: string): { config?: Partial<OffloadConfig>; problems: DocumentProblem[] } {
  const problems: DocumentProblem[] = [];
  if (!isObject(value)) return { problems: [{ path: at, message: "must be an object {thresholdBytes?, previewChars?, include?, exclude?, ttlSeconds?}" }] };
  for (const [key, field] of Object.entries(value)) {
    if (Object.hasOwn(LIMITS, key)) {
      const [min, max] = LIMITS[key as keyof typeof LIMITS];
      if (typeof field !== "number" || !Number.isInteger(field) || field < min || field > max) problems.push({ path: `${at}/${key}`, message: `must be an integer from ${min} to ${max}` });
    } else if (key === "include" || key === "exclude") {
      if (!Array.isArray(field) || !field.every((glob) => typeof glob === "string" && glob !== "")) problems.push({ path: `${at}/${key}`, message: "must be a list of <upstream>___<tool> globs" });
    } else problems.push({ path: `${at}/${key}`, message: "unknown field (known: thresholdBytes, previewChars, include, exclude, ttlSeconds)" });
  }
  return problems.length > 0 ? { problems } : { config: value as Partial<OffloadConfig>, problems };
}

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
    if (!checked.config) console.error(`mcp-edge-gateway: the OFFLOAD var is invalid and ignored: ${checked.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`);
    parsed = checked.config ?? {};
    parsedVars.set(key, parsed);
  }
  return parsed;
}

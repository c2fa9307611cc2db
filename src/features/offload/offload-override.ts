/**
 * The shape of the offload settings and the checker of an override of them. Two documents
 * carry one: the `OFFLOAD` var (features/offload/offload-config.ts, with the defaults) and
 * the filter plan's `offload` member in KV (features/filters/filter-set.ts, which imports
 * this checker: filters depend on offload, never the reverse; offload reads the plan's
 * override through the `PlanOffload` option that src/chain.ts builds, offload-settings.ts).
 */
import { isObject } from "../../core/jsonrpc";
import type { DocumentProblem } from "../../storage/document-store";

/** The longest a payload can be read back: 30 days, in seconds. */
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

const LIMITS: Record<"thresholdBytes" | "previewChars" | "ttlSeconds", [number, number]> = {
  thresholdBytes: [1, 100 * 1024 * 1024],
  previewChars: [0, 100_000],
  ttlSeconds: [60, MAX_PAYLOAD_TTL_S],
};

/** Checks an override (a partial config); problems are located under `at`. */
export function checkOffloadOverride(
  value: unknown,
  at: string,
): { config?: Partial<OffloadConfig>; problems: DocumentProblem[] } {
  const problems: DocumentProblem[] = [];
  if (!isObject(value))
    return {
      problems: [
        { path: at, message: "must be an object {thresholdBytes?, previewChars?, include?, exclude?, ttlSeconds?}" },
      ],
    };
  for (const [key, field] of Object.entries(value)) {
    if (Object.hasOwn(LIMITS, key)) {
      const [min, max] = LIMITS[key as keyof typeof LIMITS];
      if (typeof field !== "number" || !Number.isInteger(field) || field < min || field > max)
        problems.push({ path: `${at}/${key}`, message: `must be an integer from ${min} to ${max}` });
    } else if (key === "include" || key === "exclude") {
      if (!Array.isArray(field) || !field.every((glob) => typeof glob === "string" && glob !== ""))
        problems.push({ path: `${at}/${key}`, message: "must be a list of <upstream>___<tool> globs" });
    } else
      problems.push({
        path: `${at}/${key}`,
        message: "unknown field (known: thresholdBytes, previewChars, include, exclude, ttlSeconds)",
      });
  }
  return problems.length > 0 ? { problems } : { config: value as Partial<OffloadConfig>, problems };
}

/**
 * GET /admin/upstreams as the console reads it: each upstream's revision, last success and
 * failure, its recent calls and error rate, and its pinning mode with the number of pin
 * changes awaiting an operator.
 */
import { isObject } from "../../core/jsonrpc";
import type { AdminCall } from "../../admin/console/admin-client";
import { errorOf } from "../../admin/console/admin-client";

/** One upstream's health as the admin API reports it (fields it may lack read as null). */
export type UpstreamHealth = {
  readonly name: string;
  readonly protocolVersion: string | null;
  readonly lastSuccess: string | null;
  readonly lastFailure: { readonly at: string; readonly reason: string } | null;
  readonly calls: number;
  readonly errors: number;
  readonly errorRate: number | null;
  /** Pinning mode and the definitions awaiting approval (changed or held); null when pinning is off. */
  readonly pins: { readonly mode: string; readonly awaiting: number } | null;
};

function pinsOf(raw: unknown): UpstreamHealth["pins"] {
  if (!isObject(raw) || typeof raw["mode"] !== "string" || raw["mode"] === "off") return null;
  const count = (key: string) => (typeof raw[key] === "number" ? raw[key] : 0);
  return { mode: raw["mode"], awaiting: count("pending") + count("held") };
}

/** Every configured upstream's health, or the admin API's error. */
export async function readHealth(
  call: AdminCall,
): Promise<{ ok: true; upstreams: UpstreamHealth[]; note: string } | { ok: false; error: string }> {
  const answer = await call("GET", "/upstreams");
  if (!answer.ok || !isObject(answer.body) || !Array.isArray(answer.body["upstreams"]))
    return { ok: false, error: errorOf(answer).error };
  const upstreams = answer.body["upstreams"].filter(isObject).map((raw): UpstreamHealth => {
    const recent = isObject(raw["recent"]) ? raw["recent"] : {};
    const failure = isObject(raw["lastFailure"]) ? raw["lastFailure"] : null;
    return {
      name: String(raw["name"]),
      protocolVersion: typeof raw["protocolVersion"] === "string" ? raw["protocolVersion"] : null,
      lastSuccess: typeof raw["lastSuccess"] === "string" ? raw["lastSuccess"] : null,
      lastFailure: failure ? { at: String(failure["at"]), reason: String(failure["reason"]) } : null,
      calls: typeof recent["calls"] === "number" ? recent["calls"] : 0,
      errors: typeof recent["errors"] === "number" ? recent["errors"] : 0,
      errorRate: typeof recent["errorRate"] === "number" ? recent["errorRate"] : null,
      pins: pinsOf(raw["pins"]),
    };
  });
  return { ok: true, upstreams, note: typeof answer.body["note"] === "string" ? answer.body["note"] : "" };
}

/** The revision's era, for people: "2025 (2025-11-25)" or "2026 (2026-07-28)". */
export function eraOf(protocolVersion: string | null): string {
  if (protocolVersion === null) return "not seen yet";
  return `${protocolVersion.slice(0, 4)} (${protocolVersion})`;
}

/** An error rate as a percentage, or "no calls". */
export function rateText(rate: number | null): string {
  return rate === null ? "no calls" : `${(rate * 100).toFixed(1)} %`;
}

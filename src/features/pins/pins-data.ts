/**
 * GET /admin/pins as the Pins page reads it: every pinned upstream with its definitions,
 * their findings and pending changes (with the API's diff), the last Cron run's report
 * and the findings rules. The answer is the admin API's own, but much of it is text an
 * upstream wrote, so every field is narrowed from `unknown` and rendered as text.
 */
import { isObject } from "../../core/jsonrpc";
import { errorOf, type AdminCall } from "../../admin/console/admin-client";

/** One finding: the rule, its severity, where in the definition and what matched. */
export type PinFindingView = {
  readonly rule: string;
  readonly severity: string;
  readonly at: string;
  readonly match: string;
};
/** One change of a pending definition (a JSON Pointer, what happened, the values before and after). */
export type PinDiffEntry = {
  readonly path: string;
  readonly change: string;
  readonly before?: unknown;
  readonly after?: unknown;
};
/** A version of a definition: its digest, when first seen, its findings and the definition itself. */
export type PinVersionView = {
  readonly digest: string;
  readonly seenAt: string;
  readonly findings: readonly PinFindingView[];
  readonly definition: unknown;
};
/** A version not approved yet, with what changed since the approved one. */
export type PendingView = PinVersionView & {
  readonly diff: { readonly changes: readonly PinDiffEntry[]; readonly more: number } | null;
};

/** One pinned tool or prompt. */
export type PinView = {
  readonly kind: "tool" | "prompt";
  readonly name: string;
  /** pinned, pending (changed, awaiting a decision), held (never approved), rejected. */
  readonly status: string;
  readonly removedAt: string | null;
  readonly approved: PinVersionView | null;
  readonly pending: PendingView | null;
};

/** One pinned upstream. */
export type UpstreamPinsView = {
  readonly upstream: string;
  readonly mode: string;
  readonly approveNew: boolean;
  readonly definitions: readonly PinView[];
};
/** What the last Cron run checked and could not reach. */
export type SweepView = {
  readonly at: string;
  readonly checked: readonly {
    readonly upstream: string;
    readonly tools: number;
    readonly prompts: number;
    readonly changes: number;
  }[];
  readonly unreachable: readonly { readonly upstream: string; readonly error: string }[];
  readonly deferred: readonly string[];
};
export type PinsView = {
  readonly upstreams: readonly UpstreamPinsView[];
  readonly lastSweep: SweepView | null;
  readonly rules: readonly { rule: string; severity: string; why: string }[];
};

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function objects(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function findingsOf(value: unknown): PinFindingView[] {
  return objects(value).map((f) => ({
    rule: text(f["rule"]),
    severity: text(f["severity"]),
    at: text(f["at"]),
    match: text(f["match"]),
  }));
}

function versionOf(value: unknown): PinVersionView | null {
  if (!isObject(value)) return null;
  return {
    digest: text(value["digest"]),
    seenAt: text(value["seenAt"]),
    findings: findingsOf(value["findings"]),
    definition: value["definition"],
  };
}

function pendingOf(value: unknown): PendingView | null {
  const version = versionOf(value);
  if (!version || !isObject(value)) return null;
  const diff = isObject(value["diff"])
    ? {
        changes: objects(value["diff"]["changes"]).map((d) => ({
          path: text(d["path"]),
          change: text(d["change"]),
          ...("before" in d ? { before: d["before"] } : {}),
          ...("after" in d ? { after: d["after"] } : {}),
        })),
        more: typeof value["diff"]["more"] === "number" ? value["diff"]["more"] : 0,
      }
    : null;
  return { ...version, diff };
}

function pinOf(raw: Record<string, unknown>): PinView {
  return {
    kind: raw["kind"] === "prompt" ? "prompt" : "tool",
    name: text(raw["name"]),
    status: text(raw["status"]),
    removedAt: typeof raw["removedAt"] === "string" ? raw["removedAt"] : null,
    approved: versionOf(raw["approved"]),
    pending: pendingOf(raw["pending"]),
  };
}

function sweepOf(value: unknown): SweepView | null {
  if (!isObject(value)) return null;
  return {
    at: text(value["at"]),
    checked: objects(value["checked"]).map((c) => ({
      upstream: text(c["upstream"]),
      tools: Number(c["tools"] ?? 0),
      prompts: Number(c["prompts"] ?? 0),
      changes: Number(c["changes"] ?? 0),
    })),
    unreachable: objects(value["unreachable"]).map((u) => ({ upstream: text(u["upstream"]), error: text(u["error"]) })),
    deferred: (Array.isArray(value["deferred"]) ? value["deferred"] : []).map(String),
  };
}

/** Reads GET /admin/pins: every pinned upstream, the last Cron run, the rules; or the API's error. */
export async function readPinsView(
  call: AdminCall,
): Promise<{ ok: true; pins: PinsView } | { ok: false; error: string }> {
  const answer = await call("GET", "/pins");
  if (!answer.ok || !isObject(answer.body)) return { ok: false, error: errorOf(answer).error };
  const body = answer.body;
  return {
    ok: true,
    pins: {
      upstreams: objects(body["upstreams"]).map((u) => ({
        upstream: text(u["upstream"]),
        mode: text(u["mode"]),
        approveNew: u["approveNew"] === true,
        definitions: objects(u["definitions"]).map(pinOf),
      })),
      lastSweep: sweepOf(body["lastSweep"]),
      rules: objects(body["rules"]).map((r) => ({
        rule: text(r["rule"]),
        severity: text(r["severity"]),
        why: text(r["why"]),
      })),
    },
  };
}

/** Whether a definition waits for an operator: a change or a held first sight (a rejected one stays held too, but is decided). */
export function awaitsDecision(pin: PinView): boolean {
  return pin.pending !== null && pin.status !== "rejected";
}

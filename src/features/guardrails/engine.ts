/**
 * The guardrails engine: what a gateway with a guardrails document runs, bundled as a
 * module of its own (src/storage/guardrails-module.mjs, built by
 * scripts/build-yaml-module.mjs) and imported on the first call that meets a stored
 * document (store.ts), so a gateway without one never parses it and the main module does
 * not carry it.
 */
import { isObject } from "../../core/jsonrpc";
import { rootSpan } from "../../core/raw-json";
import type { DocumentProblem } from "../../storage/document-store";
import type { GuardSide, Guardrails } from "./document";
import { guardValue, TooDeepError, type GuardHit } from "./guard-json";
import { rulesFor } from "./guard-call";

export { checkGuardrails } from "./document";
export { guardCall } from "./guard-call";
export { withholdRedactedSchemas } from "./list-schemas";
export type { Guardrails };

/** What POST /admin/guardrails/preview answers: the rules applied, what they found, the sample as it would go on. */
export type Preview =
  | {
      readonly ok: true;
      readonly rules: string[];
      readonly hits: GuardHit[];
      readonly blocked: string | null;
      readonly output: unknown;
      /** Rules in scope whose webhook or model the preview does not ask (it runs the detectors only). */
      readonly notAsked: string[];
    }
  | { readonly ok: false; readonly problems: DocumentProblem[] };

const SIDES: readonly GuardSide[] = ["arguments", "result"];

/**
 * Applies `guardrails` to a sample as the gateway would to one side of a call of
 * (`upstream`, `tool`) by `persona`. The body is `{"upstream", "tool", "persona"?,
 * "on"?: "arguments"|"result", "sample": <a JSON value or a text>}`.
 *
 * @example
 * previewGuardrails(guardrails, { upstream: "alpha", tool: "echo", sample: "mail ada@example.com" }, ["password"]);
 */
export function previewGuardrails(guardrails: Guardrails, body: unknown, secretKeys: readonly string[]): Preview {
  const problems: DocumentProblem[] = [];
  if (!isObject(body))
    return { ok: false, problems: [{ path: "", message: 'send {"upstream", "tool", "persona"?, "on"?, "sample"}' }] };
  for (const field of ["upstream", "tool"]) {
    if (typeof body[field] !== "string") problems.push({ path: `/${field}`, message: "must be a string" });
  }
  if (body["persona"] !== undefined && typeof body["persona"] !== "string")
    problems.push({ path: "/persona", message: "must be a string" });
  const side = (body["on"] ?? "result") as GuardSide;
  if (!SIDES.includes(side)) problems.push({ path: "/on", message: `must be one of ${SIDES.join(", ")}` });
  if (!("sample" in body)) problems.push({ path: "/sample", message: "the text or JSON value to check" });
  if (problems.length > 0) return { ok: false, problems };
  const scope = {
    upstream: body["upstream"] as string,
    tool: body["tool"] as string,
    ...(typeof body["persona"] === "string" ? { persona: body["persona"] } : {}),
  };
  const rules = rulesFor(guardrails, scope, side);
  const text = JSON.stringify(body["sample"]);
  try {
    const verdict = guardValue(text, rootSpan(text), rules, side, { secretKeys, patterns: guardrails.patterns });
    return {
      ok: true,
      rules: rules.map((rule) => rule.name),
      hits: verdict.hits,
      blocked: verdict.blockedBy?.name ?? null,
      output: JSON.parse(verdict.text),
      notAsked: rules.filter((rule) => rule.webhook !== undefined || rule.model !== undefined).map((rule) => rule.name),
    };
  } catch (error) {
    if (!(error instanceof TooDeepError)) throw error;
    return { ok: false, problems: [{ path: "/sample", message: error.message }] };
  }
}

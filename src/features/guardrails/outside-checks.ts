/**
 * A rule's pluggable checks at call time: its webhook (the operator's service) or its
 * Workers AI model is asked about the strings of one side of a call, the same strings the
 * detectors read (guard-json.ts `readStrings`), and answers with a verdict guard-json.ts
 * applies beside the detectors' findings.
 *
 * The webhook gets `POST {"rule", "on", "upstream", "tool", "texts": [...]}` (JSON; the
 * rule's secret in its header) and answers `{"verdict": "allow"}`, `{"verdict": "block",
 * "kind"?}` or `{"verdict": "redact", "spans": [{"text": <index>, "start", "end", "kind"?,
 * "replacement"?}]}` (offsets in UTF-16 code units, as JavaScript indexes strings). A check
 * that does not answer by its deadline, fails, or answers anything else is a failure: under
 * `"failure": "closed"` the call is blocked, under `"open"` it goes on, and either way the
 * hit is recorded (`<webhook|model>-deadline` / `-failed`). A `warn` rule only ever records.
 * Neither the secret nor the texts are logged.
 */
import { readTextUpTo } from "../../core/bounded-text";
import { isObject } from "../../core/jsonrpc";
import { AI_BINDING, type CheckFailure, type ModelCheck, type WebhookCheck } from "./check-settings";
import type { GuardAction, GuardRule, GuardSide } from "./document";
import type { OutsideVerdict } from "./guard-json";
import type { Finding } from "./token-detectors";

/** The longest request body sent to a webhook, in UTF-16 code units of its JSON; past it the check fails. */
export const MAX_WEBHOOK_REQUEST_CHARS = 1024 * 1024;
/** The longest verdict read from a webhook, in bytes; past it the check fails. */
export const MAX_WEBHOOK_VERDICT_BYTES = 256 * 1024;
/** At most this many spans in one redact verdict; more is a failure. */
export const MAX_WEBHOOK_SPANS = 4_096;
/** The characters of a side's text a model reads (its strings joined by new lines); the rest is not classified. */
export const MAX_MODEL_INPUT_CHARS = 8_000;

/** Who and what is checked, as the webhook is told. */
export type CheckScope = { readonly upstream: string; readonly tool: string };

const KIND = /^[A-Za-z0-9:_-]{1,64}$/;

class CheckFailed extends Error {
  override readonly name = "CheckFailed";
  readonly deadline: boolean;
  constructor(message: string, deadline = false) {
    super(message);
    this.deadline = deadline;
  }
}

/** What `run` answers, or a CheckFailed marked as the deadline once `ms` have passed (`run`'s signal aborted then). */
async function withDeadline<T>(run: (signal: AbortSignal) => Promise<T>, ms: number, what: string): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new CheckFailed(`${what} did not answer within ${ms} ms`, true);
      controller.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([run(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function kindOf(raw: unknown, fallback: string): string {
  return typeof raw === "string" && KIND.test(raw) ? raw : fallback;
}

/** The spans of a redact verdict, by text index; throws CheckFailed on any span that is not one. */
function spansOf(raw: unknown, texts: readonly string[]): Map<number, Finding[]> {
  if (!Array.isArray(raw) || raw.length > MAX_WEBHOOK_SPANS)
    throw new CheckFailed(`a redact verdict carries "spans": a list of at most ${MAX_WEBHOOK_SPANS}`);
  const spans = new Map<number, Finding[]>();
  for (const span of raw) {
    const { text, start, end, replacement } = isObject(span) ? span : {};
    const target = typeof text === "number" ? texts[text] : undefined;
    const valid =
      target !== undefined &&
      Number.isInteger(start) &&
      Number.isInteger(end) &&
      (start as number) >= 0 &&
      (start as number) < (end as number) &&
      (end as number) <= target.length &&
      (replacement === undefined || typeof replacement === "string");
    if (!valid) throw new CheckFailed("a span is not {text, start, end} inside one of the texts sent");
    const finding: Finding = {
      start: start as number,
      end: end as number,
      kind: kindOf(isObject(span) ? span["kind"] : undefined, "webhook"),
      ...(typeof replacement === "string" ? { replacement } : {}),
    };
    const list = spans.get(text as number) ?? [];
    list.push(finding);
    spans.set(text as number, list);
  }
  return spans;
}

/** What a rule does with a verdict: a `warn` rule only records. */
function acting(rule: GuardRule, action: GuardAction): GuardAction {
  return rule.action === "warn" ? "warn" : action;
}

async function askWebhook(
  rule: GuardRule,
  webhook: WebhookCheck,
  texts: readonly string[],
  on: GuardSide,
  scope: CheckScope,
  env: Readonly<Record<string, unknown>>,
): Promise<OutsideVerdict | undefined> {
  const body = JSON.stringify({ rule: rule.name, on, upstream: scope.upstream, tool: scope.tool, texts });
  if (body.length > MAX_WEBHOOK_REQUEST_CHARS)
    throw new CheckFailed(`the text is longer than the ${MAX_WEBHOOK_REQUEST_CHARS} characters a webhook is sent`);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (webhook.secret !== undefined) {
    const secret = env[webhook.secret];
    if (typeof secret !== "string" || secret === "")
      throw new CheckFailed(`Worker secret ${webhook.secret} is not set`);
    headers[webhook.header] = webhook.header === "authorization" ? `Bearer ${secret}` : secret;
  }
  const answer = await withDeadline(
    async (signal) => {
      const response = await fetch(webhook.url, { method: "POST", headers, body, redirect: "manual", signal });
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new CheckFailed(`the webhook answered HTTP ${response.status}`);
      }
      return readTextUpTo(response.body, MAX_WEBHOOK_VERDICT_BYTES);
    },
    webhook.timeoutMs,
    "the webhook",
  );
  if (answer === undefined) throw new CheckFailed(`the verdict is larger than ${MAX_WEBHOOK_VERDICT_BYTES} bytes`);
  let verdict: unknown;
  try {
    verdict = JSON.parse(answer);
  } catch {
    throw new CheckFailed("the webhook's answer is not JSON");
  }
  const said = isObject(verdict) ? verdict["verdict"] : undefined;
  if (said === "allow") return undefined;
  if (said === "block" && isObject(verdict))
    return { detector: "webhook", action: acting(rule, "block"), kind: kindOf(verdict["kind"], "webhook") };
  if (said === "redact" && isObject(verdict)) {
    const spans = spansOf(verdict["spans"], texts);
    return spans.size === 0
      ? undefined
      : { detector: "webhook", action: acting(rule, "redact"), kind: "webhook", spans };
  }
  throw new CheckFailed('the webhook\'s answer is not {"verdict": "allow" | "block" | "redact"}');
}

/** A Workers AI binding as a model check uses it. */
type AiBinding = { run: (model: string, input: unknown) => Promise<unknown> };

function isAi(value: unknown): value is AiBinding {
  return isObject(value) && typeof value["run"] === "function";
}

/**
 * Reads a Llama Guard answer: `{response: {safe, categories}}`, or its text form
 * (`"safe"`, `"unsafe\nS1,S10"`); the categories unsafe text falls in, [] when safe.
 */
export function unsafeCategories(answer: unknown): string[] {
  const response = isObject(answer) ? answer["response"] : undefined;
  if (isObject(response) && typeof response["safe"] === "boolean") {
    if (response["safe"]) return [];
    const categories = Array.isArray(response["categories"]) ? response["categories"] : [];
    const named = categories.filter(
      (category): category is string => typeof category === "string" && KIND.test(category),
    );
    return named.length > 0 ? named : ["unsafe"];
  }
  if (typeof response === "string") {
    const [first = "", second = ""] = response.trim().split("\n");
    if (first.trim() === "safe") return [];
    if (first.trim() === "unsafe")
      return second
        .split(",")
        .map((category) => category.trim())
        .filter((c) => KIND.test(c));
  }
  throw new CheckFailed("the model answered in a shape that is not a safety verdict");
}

async function askModel(
  rule: GuardRule,
  model: ModelCheck,
  texts: readonly string[],
  env: Readonly<Record<string, unknown>>,
): Promise<OutsideVerdict | undefined> {
  const ai = env[AI_BINDING];
  if (!isAi(ai)) throw new CheckFailed(`the Worker has no Workers AI binding named ${AI_BINDING}`);
  const content = texts.join("\n").slice(0, MAX_MODEL_INPUT_CHARS);
  if (content.trim() === "") return undefined;
  const answer = await withDeadline(
    () => ai.run(model.name, { messages: [{ role: "user", content }] }),
    model.timeoutMs,
    "the model",
  );
  const categories = unsafeCategories(answer);
  if (categories.length === 0) return undefined;
  return {
    detector: "model",
    action: acting(rule, "block"),
    kind: `unsafe:${categories.slice(0, 8).join(",")}`.slice(0, 64),
  };
}

function failed(
  rule: GuardRule,
  detector: "webhook" | "model",
  failure: CheckFailure,
  error: CheckFailed,
): OutsideVerdict {
  console.warn(JSON.stringify({ event: "guardrail-check-failed", rule: rule.name, detector, reason: error.message }));
  const action = failure === "closed" ? acting(rule, "block") : "warn";
  return { detector, action, kind: `${detector}-${error.deadline ? "deadline" : "failed"}` };
}

/**
 * Asks the webhook or model of each of `rules` that has one about `texts` (all at once);
 * the verdicts by rule, none for a rule that allowed.
 *
 * @example
 * const outside = await askOutside(rules, readStrings(text, span, rules, keys), "result", scope, env);
 */
export async function askOutside(
  rules: readonly GuardRule[],
  texts: readonly string[],
  on: GuardSide,
  scope: CheckScope,
  env: Readonly<Record<string, unknown>>,
): Promise<Map<GuardRule, OutsideVerdict>> {
  const verdicts = new Map<GuardRule, OutsideVerdict>();
  await Promise.all(
    rules.map(async (rule) => {
      const { webhook, model } = rule;
      const check = webhook ?? model;
      if (!check) return;
      const detector = webhook ? "webhook" : "model";
      try {
        const verdict = webhook
          ? await askWebhook(rule, webhook, texts, on, scope, env)
          : model && (await askModel(rule, model, texts, env));
        if (verdict) verdicts.set(rule, verdict);
      } catch (error) {
        const reason = error instanceof CheckFailed ? error : new CheckFailed(`the ${detector} could not be reached`);
        verdicts.set(rule, failed(rule, detector, check.failure, reason));
      }
    }),
  );
  return verdicts;
}

/** True when a rule asks a webhook or a model. */
export function asksOutside(rule: GuardRule): boolean {
  return rule.webhook !== undefined || rule.model !== undefined;
}

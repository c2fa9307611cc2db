/**
 * The guardrails document (KV "guardrails"): rules that apply detectors to a tool call's
 * arguments and result, each scoped by upstream, tool and persona, and the operator's
 * named patterns. Checked on every write and every read; every problem is located by a
 * JSON Pointer, and patterns are compiled here, once per document an isolate reads.
 *
 * ```json
 * { "patterns": { "order-id": { "pattern": "ACME-[0-9]{6}" } },
 *   "rules": [{ "name": "no-cards-out", "action": "block", "detectors": ["personal"], "on": ["arguments"],
 *               "upstreams": ["partner-*"], "tools": ["*"], "personas": ["contractor"] }] }
 * ```
 */
import { isObject } from "../../core/jsonrpc";
import { at, checkText, rootProblem, unknownFields } from "../../storage/document-checks";
import { deepFreeze } from "../../storage/document-limits";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { checkModel, checkWebhook, type ModelCheck, type WebhookCheck, type WriteContext } from "./check-settings";
import { BUILT_IN_DETECTORS, PATTERN_PREFIX } from "./detectors";
import { compilePattern, PatternError, type SafePattern } from "./safe-pattern";

/** What a rule does when a detector finds something. */
export type GuardAction = "redact" | "block" | "warn";
/** Which side of a call a rule reads. */
export type GuardSide = "arguments" | "result";

export type GuardRule = {
  readonly name: string;
  readonly action: GuardAction;
  readonly detectors: readonly string[];
  readonly on: readonly GuardSide[];
  /** Globs over upstream names; absent: every upstream. */
  readonly upstreams?: readonly string[];
  /** Globs over the upstream's own tool names; absent: every tool. */
  readonly tools?: readonly string[];
  /** Persona names; absent: every caller, with a persona or without. */
  readonly personas?: readonly string[];
  readonly description?: string;
  /** The operator's service, asked for a verdict on the side's strings (outside-checks.ts). */
  readonly webhook?: WebhookCheck;
  /** A Workers AI classifier asked whether the side's text is safe. */
  readonly model?: ModelCheck;
};

/** An `approve` rule: every call in its scope waits for a person's approval (features/approvals/). */
export type ApprovalRule = Omit<GuardRule, "action" | "detectors" | "on"> & {
  readonly action: "approve";
  readonly approval: ApprovalTerms;
};

/** An `approve` rule's terms: approvers are callers holding one of `roles`; an approval runs one call within `holdSeconds`. */
export type ApprovalTerms = { readonly roles: readonly string[]; readonly holdSeconds: number };

export type { WriteContext };

export type Guardrails = {
  readonly rules: readonly GuardRule[];
  /** The `approve` rules, in the document's order. */
  readonly approvals: readonly ApprovalRule[];
  /** The operator's patterns, compiled. */
  readonly patterns: ReadonlyMap<string, SafePattern>;
};

/** At most this many rules in the document. */
export const MAX_RULES = 100;
/** At most this many named patterns. */
export const MAX_PATTERNS = 50;
/** At most this many entries in one of a rule's lists (detectors, upstreams, tools, personas). */
export const MAX_LIST_ENTRIES = 32;
/** The longest an approval may hold, in seconds (a day). */
export const MAX_APPROVAL_HOLD_SECONDS = 24 * 60 * 60;

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ACTIONS: readonly string[] = ["redact", "block", "warn", "approve"];
const SIDES: readonly GuardSide[] = ["arguments", "result"];
const RULE_FIELDS = [
  ...["name", "action", "detectors", "on", "upstreams", "tools", "personas", "description"],
  ...["webhook", "model", "approval"],
];

function stringList(
  value: unknown,
  path: string,
  problems: DocumentProblem[],
  check?: (item: string, path: string) => void,
): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST_ENTRIES) {
    problems.push({ path, message: `must be a list of 1 to ${MAX_LIST_ENTRIES} strings` });
    return undefined;
  }
  const out: string[] = [];
  value.forEach((item, index) => {
    if (!checkText(item, at(path, index), problems, 256)) return;
    check?.(item, at(path, index));
    out.push(item);
  });
  return out;
}

function checkPatterns(value: unknown, problems: DocumentProblem[]): Map<string, SafePattern> {
  const patterns = new Map<string, SafePattern>();
  if (value === undefined) return patterns;
  if (!isObject(value) || Object.keys(value).length > MAX_PATTERNS) {
    problems.push({ path: "/patterns", message: `must be an object of at most ${MAX_PATTERNS} named patterns` });
    return patterns;
  }
  for (const [name, entry] of Object.entries(value)) {
    const path = at("/patterns", name);
    if (!NAME.test(name)) problems.push({ path, message: "a pattern name is 1-64 letters, digits, '-' or '_'" });
    if (!isObject(entry)) {
      problems.push({ path, message: 'must be an object {"pattern": "...", "ignoreCase"?: true}' });
      continue;
    }
    unknownFields(entry, ["pattern", "ignoreCase", "description"], path, problems);
    if (entry["ignoreCase"] !== undefined && typeof entry["ignoreCase"] !== "boolean")
      problems.push({ path: at(path, "ignoreCase"), message: "must be true or false" });
    if (typeof entry["pattern"] !== "string") {
      problems.push({
        path: at(path, "pattern"),
        message: "must be a string in the guardrails' pattern language (docs/guardrails.md)",
      });
      continue;
    }
    try {
      patterns.set(name, compilePattern(entry["pattern"], entry["ignoreCase"] === true));
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      problems.push({ path: at(path, "pattern"), message: error.message });
    }
  }
  return patterns;
}

function checkRule(
  value: unknown,
  path: string,
  patterns: ReadonlyMap<string, SafePattern>,
  problems: DocumentProblem[],
  context: WriteContext | undefined,
): GuardRule | ApprovalRule | undefined {
  if (!isObject(value)) {
    problems.push({
      path,
      message: 'must be an object {"name", "action", "detectors", "on"?, "upstreams"?, "tools"?, "personas"?}',
    });
    return undefined;
  }
  const before = problems.length;
  unknownFields(value, RULE_FIELDS, path, problems);
  const name = value["name"];
  if (typeof name !== "string" || !NAME.test(name))
    problems.push({ path: at(path, "name"), message: "must be 1-64 letters, digits, '-' or '_'" });
  const action = value["action"];
  if (typeof action !== "string" || !ACTIONS.includes(action))
    problems.push({ path: at(path, "action"), message: `must be one of ${ACTIONS.join(", ")}` });
  if (action === "approve") return checkApprovalRule(value, path, problems, before);
  const pluggable = value["webhook"] !== undefined || value["model"] !== undefined;
  const listed = value["detectors"];
  // A rule with a webhook or a model may name no detector.
  const none = listed === undefined || (Array.isArray(listed) && listed.length === 0);
  const detectors =
    none && pluggable
      ? []
      : stringList(listed, at(path, "detectors"), problems, (item, itemPath) => {
          const known =
            (BUILT_IN_DETECTORS as readonly string[]).includes(item) ||
            (item.startsWith(PATTERN_PREFIX) && patterns.has(item.slice(PATTERN_PREFIX.length)));
          if (!known)
            problems.push({
              path: itemPath,
              message: `unknown detector (known: ${BUILT_IN_DETECTORS.join(", ")}, or pattern:<a name under /patterns>)`,
            });
        });
  const on =
    value["on"] === undefined
      ? [...SIDES]
      : stringList(value["on"], at(path, "on"), problems, (item, itemPath) => {
          if (!SIDES.includes(item as GuardSide))
            problems.push({ path: itemPath, message: `must be one of ${SIDES.join(", ")}` });
        });
  const rule: { -readonly [K in keyof GuardRule]: GuardRule[K] } = {
    name: name as string,
    action: action as GuardAction,
    detectors: detectors ?? [],
    on: (on ?? []) as GuardSide[],
  };
  if (value["approval"] !== undefined)
    problems.push({ path: at(path, "approval"), message: 'only an "approve" rule has approval terms' });
  const webhook =
    value["webhook"] === undefined ? undefined : checkWebhook(value["webhook"], at(path, "webhook"), problems, context);
  if (webhook) rule.webhook = webhook;
  const model =
    value["model"] === undefined ? undefined : checkModel(value["model"], at(path, "model"), problems, context);
  if (model) rule.model = model;
  if (webhook && model)
    problems.push({ path: at(path, "model"), message: "a rule asks a webhook or a model, not both: write two rules" });
  if (model && action === "redact")
    problems.push({
      path: at(path, "action"),
      message: 'a model check finds no stretch of text to redact: "block" or "warn" with a model',
    });
  return scoped<GuardRule>(rule, value, path, problems, before);
}

function scoped<Rule extends GuardRule | ApprovalRule>(
  rule: { -readonly [K in keyof Rule]: Rule[K] },
  value: Record<string, unknown>,
  path: string,
  problems: DocumentProblem[],
  before: number,
): Rule | undefined {
  for (const field of ["upstreams", "tools", "personas"] as const) {
    if (value[field] !== undefined) rule[field] = stringList(value[field], at(path, field), problems);
  }
  if (value["description"] !== undefined && checkText(value["description"], at(path, "description"), problems))
    rule.description = value["description"] as string;
  return problems.length === before ? rule : undefined;
}

/** An `approve` rule: no detectors or sides (every call in scope is held), `approval: {roles, holdSeconds}`. */
function checkApprovalRule(
  value: Record<string, unknown>,
  path: string,
  problems: DocumentProblem[],
  before: number,
): ApprovalRule | undefined {
  for (const field of ["detectors", "on", "webhook", "model"])
    if (value[field] !== undefined)
      problems.push({ path: at(path, field), message: 'an "approve" rule holds every call in its scope: remove it' });
  const terms = value["approval"];
  const termsPath = at(path, "approval");
  if (!isObject(terms)) {
    problems.push({ path: termsPath, message: 'an "approve" rule needs {"roles": [...], "holdSeconds": n}' });
    return undefined;
  }
  unknownFields(terms, ["roles", "holdSeconds"], termsPath, problems);
  const roles = stringList(terms["roles"], at(termsPath, "roles"), problems);
  const hold = terms["holdSeconds"];
  if (!Number.isInteger(hold) || (hold as number) < 1 || (hold as number) > MAX_APPROVAL_HOLD_SECONDS)
    problems.push({
      path: at(termsPath, "holdSeconds"),
      message: `must be a whole number of seconds from 1 to ${MAX_APPROVAL_HOLD_SECONDS}`,
    });
  const rule = {
    name: value["name"] as string,
    action: "approve" as const,
    approval: { roles: roles ?? [], holdSeconds: hold as number },
  };
  return scoped<ApprovalRule>(rule, value, path, problems, before);
}

/**
 * Checks a guardrails document and compiles its patterns; `context` (on write) lets the
 * pluggable checks be held to the Worker's secrets, AI binding and URL.
 *
 * @example
 * const checked = checkGuardrails({ rules: [{ name: "pii", action: "redact", detectors: ["personal"] }] });
 */
export function checkGuardrails(value: unknown, context?: WriteContext): Checked<Guardrails> {
  const root = rootProblem(value, '{"rules": [...], "patterns"?: {...}}');
  if (root) return { ok: false, problems: [root] };
  const document = value as Record<string, unknown>;
  const problems: DocumentProblem[] = [];
  unknownFields(document, ["rules", "patterns", "description"], "", problems);
  const patterns = checkPatterns(document["patterns"], problems);
  const rules: GuardRule[] = [];
  const approvals: ApprovalRule[] = [];
  const list = document["rules"];
  if (!Array.isArray(list) || list.length > MAX_RULES)
    problems.push({ path: "/rules", message: `must be a list of at most ${MAX_RULES} rules` });
  else {
    const names = new Set<string>();
    list.forEach((item, index) => {
      const rule = checkRule(item, at("/rules", index), patterns, problems, context);
      if (!rule) return;
      if (names.has(rule.name))
        problems.push({ path: at(at("/rules", index), "name"), message: `another rule is named "${rule.name}"` });
      names.add(rule.name);
      if (rule.action === "approve") approvals.push(rule);
      else rules.push(rule);
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: { rules: deepFreeze(rules), approvals: deepFreeze(approvals), patterns } };
}

/**
 * The rules document (KV key `shaping/rules`): operational guidance the gateway appends
 * to tool results, as the reference platform's rule-enforcement middleware does. A rule
 * matches tools by a glob over `<upstream>___<tool>` and, optionally, a condition: an
 * argument or a part of the result (a JSON Pointer) equals a value, or the call failed
 * (`isError: true`). Hints are per tool (glob) and always appended.
 *
 * ```yaml
 * rules:
 *   - name: deprecated-table
 *     tool: "warehouse___query"
 *     when: { argument: /table, equals: orders_v1 }
 *     message: "orders_v1 is deprecated; use orders_v2."
 *   - tool: "*"
 *     when: { failed: true }
 *     message: "If this keeps failing, check the upstream's status page."
 * hints:
 *   alpha___add: "Both numbers must be finite."
 * ```
 */
import { child, parsePointer, pointerProblem } from "../../core/json-pointer";
import { isObject } from "../../core/jsonrpc";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { deepFreeze } from "../../storage/document-limits";
import { at, checkText, rootProblem, unknownFields } from "../../storage/document-checks";
import { matchesGlob } from "../../core/glob";

const MAX_RULES = 1_000;
const MAX_GLOB_CHARS = 256;

/** When a rule fires, besides its tool matching. */
export type RuleCondition =
  | { readonly argument: string; readonly equals: unknown }
  | { readonly result: string; readonly equals: unknown }
  | { readonly failed: boolean };

export type Rule = {
  readonly name: string;
  readonly tool: string;
  readonly when?: RuleCondition;
  readonly message: string;
};

export type RulesDocument = { readonly rules: readonly Rule[]; readonly hints: Readonly<Record<string, string>> };

function checkCondition(value: unknown, path: string, problems: DocumentProblem[]): void {
  const shape =
    "must be {argument: <pointer>, equals: <value>}, {result: <pointer>, equals: <value>} or {failed: true|false}";
  if (!isObject(value)) return void problems.push({ path, message: shape });
  if ("failed" in value) {
    unknownFields(value, ["failed"], path, problems);
    if (typeof value["failed"] !== "boolean")
      problems.push({ path: at(path, "failed"), message: "must be true or false" });
    return;
  }
  const side = "argument" in value ? "argument" : "result" in value ? "result" : undefined;
  if (!side || !("equals" in value)) return void problems.push({ path, message: shape });
  unknownFields(value, [side, "equals"], path, problems);
  const problem = pointerProblem(value[side]);
  if (problem) problems.push({ path: at(path, side), message: problem });
}

/**
 * Validates a rules document.
 *
 * @example
 * checkRules({ rules: [{ tool: "alpha___*", when: { failed: true }, message: "Retry later." }] }); // { ok: true, ... }
 */
export function checkRules(value: unknown): Checked<RulesDocument> {
  const root = rootProblem(value, "{rules?, hints?}");
  if (root || !isObject(value)) return { ok: false, problems: [root!] };
  const problems: DocumentProblem[] = [];
  unknownFields(value, ["rules", "hints"], "", problems);
  const list = value["rules"] ?? [];
  const rules: Rule[] = [];
  if (!Array.isArray(list) || list.length > MAX_RULES)
    problems.push({ path: "/rules", message: `must be a list of at most ${MAX_RULES} {name?, tool, when?, message}` });
  else
    list.forEach((rule: unknown, index) => {
      const path = at("/rules", index);
      if (!isObject(rule))
        return void problems.push({ path, message: "must be an object {name?, tool, when?, message}" });
      unknownFields(rule, ["name", "tool", "when", "message"], path, problems);
      if (rule["name"] !== undefined) checkText(rule["name"], at(path, "name"), problems, MAX_GLOB_CHARS);
      checkText(rule["tool"], at(path, "tool"), problems, MAX_GLOB_CHARS);
      checkText(rule["message"], at(path, "message"), problems);
      if (rule["when"] !== undefined) checkCondition(rule["when"], at(path, "when"), problems);
      rules.push({
        ...(rule as Omit<Rule, "name">),
        name: typeof rule["name"] === "string" ? rule["name"] : `rules/${index}`,
      });
    });
  const hints: Record<string, string> = Object.create(null) as Record<string, string>;
  const table = value["hints"] ?? {};
  if (!isObject(table)) problems.push({ path: "/hints", message: "must be an object of hint texts by tool (glob)" });
  else
    for (const [tool, hint] of Object.entries(table))
      if (checkText(hint, at("/hints", tool), problems)) hints[tool] = hint;
  return problems.length > 0
    ? { ok: false, problems }
    : { ok: true, value: deepFreeze(structuredClone({ rules, hints })) };
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(b);
    return (
      Object.keys(a).length === keys.length && keys.every((key) => Object.hasOwn(a, key) && sameJson(a[key], b[key]))
    );
  }
  return false;
}

function valueAt(root: unknown, pointer: string): { found: boolean; value: unknown } {
  let current: { found: boolean; value: unknown } = { found: true, value: root };
  for (const token of parsePointer(pointer)) {
    current = child(current.value, token);
    if (!current.found) return current;
  }
  return current;
}

/** What a call offers a rule's condition. */
export type RuleSubject = { readonly arguments: unknown; readonly result: unknown; readonly failed: boolean };

/** True when `condition` holds for the call. */
export function conditionHolds(condition: RuleCondition | undefined, subject: RuleSubject): boolean {
  if (!condition) return true;
  if ("failed" in condition) return condition.failed === subject.failed;
  const [root, pointer] =
    "argument" in condition ? [subject.arguments, condition.argument] : [subject.result, condition.result];
  const found = valueAt(root, pointer);
  return found.found && sameJson(found.value, condition.equals);
}

/** The rules that match `tool` by glob (their conditions still to check). */
export function rulesFor(document: RulesDocument, tool: string): Rule[] {
  return document.rules.filter((rule) => matchesGlob(rule.tool, tool));
}

/** The hints of `tool`, in document order. */
export function hintsFor(document: RulesDocument, tool: string): string[] {
  return Object.entries(document.hints)
    .filter(([glob]) => matchesGlob(glob, tool))
    .map(([, hint]) => hint);
}

/**
 * Filter sets and plans: the documents users write (JSON or YAML), their validation
 * with the location of every error, and nothing else. A document that has one error is
 * rejected whole: a set is never half-applied.
 */
import { validate as validatePatch } from "fast-json-patch/module/core.mjs";
import type { Operation } from "fast-json-patch";
import { isObject } from "../../core/jsonrpc";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { deepFreeze, MAX_DOCUMENT_DEPTH, tooDeepAt } from "../../storage/document-limits";
import { escapeToken, parsePointer, pointerProblem } from "../../core/json-pointer";
import { checkOffloadOverride, type OffloadConfig } from "../offload/offload-override";
import { buildTree, MAX_RETAIN_TREE_SIZE, RetainError, type RetainBudget } from "./retain-tree";

export const FILTER_SET_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const TOOL_KEY = /^[A-Za-z0-9_*?-][A-Za-z0-9_*?.-]{0,127}$/;
const MAX_VARIANTS = 32;
/**
 * Branches and copied members all of a set's `retain` lists may combine into: every read
 * of the set builds each list's tree to check it (a list alone may reach
 * MAX_RETAIN_TREE_SIZE, some 20 ms), so without a bound for the set a 500 KB document of
 * such lists took 19 s to check. Plain pointers count a branch each: the most the admin
 * API's 512 KiB can hold (about 260,000 tokens) fits.
 */
export const MAX_SET_RETAIN_WORK = 3 * MAX_RETAIN_TREE_SIZE;

export type FilterRule = { readonly retain?: readonly string[]; readonly patches?: readonly Operation[] };
export type FilterVariant = FilterRule & { readonly test: { readonly path: string; readonly value: unknown } };
/** One rule, or variants tried in order (the first whose test holds applies). */
export type ToolFilter = FilterRule | readonly FilterVariant[];

export type FilterSet = {
  readonly name: string;
  /** `shadow`: measure what the set would remove, change nothing. */
  readonly mode: "enforce" | "shadow";
  readonly description?: string;
  /** Keys: `<upstream>___<tool>`, with `*` and `?` globs. */
  readonly tools: Readonly<Record<string, ToolFilter>>;
};

/** Which filter set a call uses. The most specific entry wins: route, then upstream, then `default`. */
export type FilterPlan = {
  /** Overrides of the offload settings for this gateway (see features/offload/offload-override.ts). */
  readonly offload?: Partial<OffloadConfig>;
  readonly default?: string | null;
  readonly routes?: Readonly<Record<string, string | null>>;
  readonly upstreams?: Readonly<Record<string, string | null>>;
};

function checkPointerList(value: unknown, at: string, problems: DocumentProblem[], setWork: RetainBudget): void {
  if (!Array.isArray(value)) {
    problems.push({ path: at, message: 'must be a list of JSON Pointers, such as ["/user/name"]' });
    return;
  }
  const before = problems.length;
  value.forEach((pointer, index) => {
    const problem = pointerProblem(pointer);
    if (problem) problems.push({ path: `${at}/${index}`, message: problem });
  });
  // Past the set's bound, the lists left are not built (the set is refused for that already).
  if (problems.length > before || setWork.work > MAX_SET_RETAIN_WORK) return;
  const budget: RetainBudget = { work: 0 };
  try {
    buildTree(value as string[], budget);
    setWork.work += budget.work;
  } catch (error) {
    // RangeError: a pointer of more tokens than the stack has frames for the tree's walk.
    if (error instanceof RangeError)
      problems.push({
        path: at,
        message: `a pointer is nested too deep to use (${deepestTokens(value as string[])} reference tokens)`,
      });
    else if (error instanceof RetainError) problems.push({ path: at, message: error.message });
    else throw error;
  }
}

/** The most reference tokens one of `pointers` has. */
function deepestTokens(pointers: readonly string[]): number {
  return pointers.reduce((most, pointer) => Math.max(most, parsePointer(pointer).length), 0);
}

/**
 * JSON Patch resolves a path by plain property access, so `__proto__` (or
 * `constructor/prototype`) would reach an object's prototype; fast-json-patch refuses
 * such a path at run time with an exception. Refused here, where it can be located.
 */
function prototypeProblem(pointer: string): string | undefined {
  const tokens = parsePointer(pointer);
  const bad = tokens.findIndex(
    (token, i) => token === "__proto__" || (token === "prototype" && tokens[i - 1] === "constructor"),
  );
  if (bad < 0) return undefined;
  const through = tokens[bad] === "__proto__" ? "__proto__" : "constructor/prototype";
  return `"${pointer}" goes through ${through}: a patch may not reach an object's prototype`;
}

/** A problem for a document nested deeper than the bound, located at the first place too deep. */
function depthProblem(value: unknown): DocumentProblem | undefined {
  const at = tooDeepAt(value);
  return at === undefined
    ? undefined
    : { path: at, message: `nested deeper than ${MAX_DOCUMENT_DEPTH} levels of objects and arrays` };
}

/** RFC 6902's operations; fast-json-patch also runs an internal `_get`, which a filter set may not name. */
const PATCH_OPS: ReadonlySet<unknown> = new Set(["add", "remove", "replace", "move", "copy", "test"]);

function checkPatches(value: unknown, at: string, problems: DocumentProblem[]): void {
  if (!Array.isArray(value)) {
    problems.push({ path: at, message: "must be a list of JSON Patch operations (RFC 6902)" });
    return;
  }
  value.forEach((operation, index) => {
    if (!isObject(operation)) {
      problems.push({ path: `${at}/${index}`, message: 'must be an operation such as {"op":"remove","path":"/a"}' });
      return;
    }
    const error = validatePatch([operation as unknown as Operation]);
    if (error) problems.push({ path: `${at}/${index}`, message: `${error.name}: ${error.message.split("\n")[0]}` });
    else if (!PATCH_OPS.has(operation["op"]))
      problems.push({
        path: `${at}/${index}`,
        message: `OPERATION_OP_INVALID: "op" must be one of ${[...PATCH_OPS].join(", ")} (RFC 6902)`,
      });
    for (const field of ["path", "from"] as const) {
      if (operation[field] === undefined) continue;
      const problem = pointerProblem(operation[field]) ?? prototypeProblem(operation[field] as string);
      if (problem) problems.push({ path: `${at}/${index}/${field}`, message: problem });
    }
  });
}

function checkRule(
  value: unknown,
  at: string,
  problems: DocumentProblem[],
  variant: boolean,
  setWork: RetainBudget,
): void {
  if (!isObject(value)) {
    problems.push({
      path: at,
      message: variant
        ? "must be a variant {test, retain?, patches?}"
        : "must be a rule {retain?, patches?} or a list of variants",
    });
    return;
  }
  const known = variant ? ["test", "retain", "patches"] : ["retain", "patches"];
  for (const key of Object.keys(value)) {
    if (!known.includes(key))
      problems.push({ path: `${at}/${key}`, message: `unknown field (known: ${known.join(", ")})` });
  }
  if (value["retain"] === undefined && value["patches"] === undefined)
    problems.push({ path: at, message: "needs retain, patches or both" });
  if (value["retain"] !== undefined) checkPointerList(value["retain"], `${at}/retain`, problems, setWork);
  if (value["patches"] !== undefined) checkPatches(value["patches"], `${at}/patches`, problems);
  if (variant) {
    const test = value["test"];
    if (!isObject(test) || !("value" in test)) {
      problems.push({ path: `${at}/test`, message: 'must be {"path": "/a/pointer", "value": <what it must equal>}' });
    } else {
      const problem = pointerProblem(test["path"]);
      if (problem) problems.push({ path: `${at}/test/path`, message: problem });
    }
  }
}

/** Validates a filter set document; `name` comes from where it is stored. */
export function checkFilterSet(name: string, value: unknown): Checked<FilterSet> {
  const problems: DocumentProblem[] = [];
  if (!FILTER_SET_NAME.test(name))
    problems.push({ path: "", message: `the set name "${name}" must be 1-64 letters, digits, '-' or '_'` });
  if (!isObject(value))
    return { ok: false, problems: [...problems, { path: "", message: 'must be an object with a "tools" map' }] };
  const tooDeep = depthProblem(value);
  if (tooDeep) return { ok: false, problems: [...problems, tooDeep] };
  for (const key of Object.keys(value)) {
    if (!["version", "mode", "description", "tools"].includes(key))
      problems.push({
        path: `/${escapeToken(key)}`,
        message: "unknown field (known: version, mode, description, tools)",
      });
  }
  if (value["version"] !== undefined && value["version"] !== 1)
    problems.push({ path: "/version", message: "must be 1" });
  const mode = value["mode"] ?? "enforce";
  if (mode !== "enforce" && mode !== "shadow")
    problems.push({ path: "/mode", message: 'must be "enforce" or "shadow"' });
  if (value["description"] !== undefined && typeof value["description"] !== "string")
    problems.push({ path: "/description", message: "must be a string" });
  const tools = value["tools"];
  if (!isObject(tools)) {
    problems.push({
      path: "/tools",
      message: "must map tool names (<upstream>___<tool>, globs * and ? allowed) to rules",
    });
  } else {
    const setWork: RetainBudget = { work: 0 };
    for (const [key, rule] of Object.entries(tools)) {
      const at = `/tools/${escapeToken(key)}`;
      if (!TOOL_KEY.test(key))
        problems.push({ path: at, message: "a tool key is <upstream>___<tool>, with * and ? as wildcards" });
      if (Array.isArray(rule)) {
        if (rule.length === 0 || rule.length > MAX_VARIANTS)
          problems.push({ path: at, message: `needs 1 to ${MAX_VARIANTS} variants` });
        rule.forEach((variant, index) => checkRule(variant, `${at}/${index}`, problems, true, setWork));
      } else checkRule(rule, at, problems, false, setWork);
    }
    if (setWork.work > MAX_SET_RETAIN_WORK) {
      problems.push({
        path: "/tools",
        message: `the rules' retain lists combine into more than ${MAX_SET_RETAIN_WORK} branches and copied members in all (each name beside a "*" takes a copy of what the "*" keeps): use fewer rules with wide lists, or fewer wildcards beside names`,
      });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    // Frozen: the set is shared by every call while it is cached (see storage/document-limits.ts).
    value: deepFreeze({
      name,
      mode: mode as FilterSet["mode"],
      ...(typeof value["description"] === "string" ? { description: value["description"] } : {}),
      tools: structuredClone(tools) as FilterSet["tools"],
    }),
  };
}

function checkNameMap(value: unknown, at: string, problems: DocumentProblem[]): void {
  if (value === undefined) return;
  if (!isObject(value)) {
    problems.push({ path: at, message: "must map names to a filter set name (or null for none)" });
    return;
  }
  for (const [key, set] of Object.entries(value)) {
    if (set !== null && (typeof set !== "string" || !FILTER_SET_NAME.test(set)))
      problems.push({ path: `${at}/${escapeToken(key)}`, message: "must be a filter set name or null" });
  }
}

/** Validates the plan document. */
export function checkPlan(value: unknown): Checked<FilterPlan> {
  const problems: DocumentProblem[] = [];
  if (!isObject(value))
    return { ok: false, problems: [{ path: "", message: "must be an object {default?, routes?, upstreams?}" }] };
  const tooDeep = depthProblem(value);
  if (tooDeep) return { ok: false, problems: [tooDeep] };
  for (const key of Object.keys(value)) {
    if (!["version", "default", "routes", "upstreams", "offload"].includes(key))
      problems.push({
        path: `/${escapeToken(key)}`,
        message: "unknown field (known: version, default, routes, upstreams, offload)",
      });
  }
  const fallback = value["default"];
  if (
    fallback !== undefined &&
    fallback !== null &&
    (typeof fallback !== "string" || !FILTER_SET_NAME.test(fallback))
  ) {
    problems.push({ path: "/default", message: "must be a filter set name or null" });
  }
  if (value["offload"] !== undefined) problems.push(...checkOffloadOverride(value["offload"], "/offload").problems);
  checkNameMap(value["routes"], "/routes", problems);
  checkNameMap(value["upstreams"], "/upstreams", problems);
  if (isObject(value["routes"])) {
    for (const route of Object.keys(value["routes"])) {
      if (!/^\/mcp(\/[A-Za-z0-9_-]+)?$/.test(route))
        problems.push({ path: `/routes/${escapeToken(route)}`, message: 'a route is "/mcp" or "/mcp/<upstream>"' });
    }
  }
  return problems.length > 0
    ? { ok: false, problems }
    : { ok: true, value: deepFreeze(structuredClone(value)) as FilterPlan };
}

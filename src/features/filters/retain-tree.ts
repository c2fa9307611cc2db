/**
 * The tree of what a rule's `retain` pointers keep (the semantics: retain.ts), built once
 * per rule and bounded, then prepared for both walks, over a parsed value (retain.ts) and
 * over text (retain-text.ts): each branch's names in a list, required ones first, found
 * by a key's length before its characters are compared.
 */
import { parsePointer } from "../../core/json-pointer";
/** The reference token that stands for every element or member. */
export const WILDCARD = "*";

/** A tree of what to keep: `true` keeps the whole value at that point. */
export type Keep = true | Map<string, Keep>;

export class RetainError extends Error {
  override readonly name = "RetainError";
}

function addPath(tree: Map<string, Keep>, tokens: readonly string[]): Keep {
  if (tokens.length === 0) return true;
  let node = tree;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const existing = node.get(token);
    if (existing === true) return tree; // an ancestor is kept whole already
    if (i === tokens.length - 1) {
      node.set(token, true);
    } else {
      const next = existing ?? new Map<string, Keep>();
      node.set(token, next);
      node = next;
    }
  }
  return tree;
}

/**
 * Branches and copied members a rule's pointers may combine into: a named token beside a
 * `*` takes a copy of what the `*` keeps, which nested and wide lists multiply.
 */
export const MAX_RETAIN_TREE_SIZE = 100_000;

/**
 * Per branch, the names only a wildcard's pointers reach there (taken into a named
 * sibling of the `*`): kept where the value has them, never required.
 */
const LENIENT = new WeakMap<Map<string, Keep>, ReadonlySet<string>>();

/** Whether a name of `branch` must be in the value where a pointer without `*` leads (not only kept where present). */
function isRequired(branch: Map<string, Keep>, token: string): boolean {
  return LENIENT.get(branch)?.has(token) !== true;
}

/** Branches and copied members counted while wildcards are shared (what it costs: `countWork`). */
export type RetainBudget = { work: number };

/** Counts `amount` of work, and refuses a tree past MAX_RETAIN_TREE_SIZE before doing it. */
function countWork(budget: RetainBudget, amount: number): void {
  budget.work += amount;
  if (budget.work > MAX_RETAIN_TREE_SIZE)
    throw new RetainError(
      `the pointers combine into more than ${MAX_RETAIN_TREE_SIZE} branches and copied members (each name beside a "*" takes a copy of what the "*" keeps): use fewer names or fewer wildcards beside them`,
    );
}

/** What `named` and `wildcard` keep together; what only `wildcard` keeps is lenient. Builds new branches, changes none. */
function union(named: Keep, wildcard: Keep, budget: RetainBudget): Keep {
  if (named === true || wildcard === true) return true;
  countWork(budget, named.size + wildcard.size);
  const out = new Map(named);
  const lenient = new Set(LENIENT.get(named));
  for (const [token, sub] of wildcard) {
    const own = out.get(token);
    out.set(token, own === undefined ? sub : union(own, sub, budget));
    if (own === undefined && token !== WILDCARD) lenient.add(token);
  }
  LENIENT.set(out, lenient);
  return out;
}

/**
 * `keep` with every named token beside a `*` also keeping what the `*` keeps, at every
 * level; new branches, counted. A branch of the pointers as written counts once; one
 * beside a wildcard, or reached through a union (`copied`: shared by every name it was
 * given to, so walked once per name), counts its members.
 */
function withWildcardsShared(keep: Keep, budget: RetainBudget, copied = false): Keep {
  if (keep === true) return true;
  const wildcard = keep.get(WILDCARD);
  countWork(budget, copied || wildcard !== undefined ? keep.size : 1);
  const out = new Map<string, Keep>();
  for (const [token, sub] of keep) {
    const merged = token === WILDCARD || wildcard === undefined ? sub : union(sub, wildcard, budget);
    out.set(token, withWildcardsShared(merged, budget, copied || merged !== sub));
  }
  const lenient = LENIENT.get(keep);
  if (lenient) LENIENT.set(out, lenient);
  return out;
}

/**
 * The tree of what `pointers` keep (`true` when one of them is the whole value); throws
 * `RetainError` when they combine into more than MAX_RETAIN_TREE_SIZE branches and members.
 * `budget.work` ends holding what the tree cost.
 */
export function buildTree(pointers: readonly string[], budget: RetainBudget = { work: 0 }): Keep {
  const tree = new Map<string, Keep>();
  for (const pointer of pointers) if (addPath(tree, parsePointer(pointer)) === true) return true;
  return withWildcardsShared(tree, budget);
}

export type Node = true | Branch;
export type Branch = {
  /** The names kept, the first `required` of which the value must have. */
  readonly names: string[];
  readonly subs: Node[];
  readonly required: number;
  /** Each name's index, for a branch of more than `MAX_NAMES_COMPARED` names (a smaller one is searched in place). */
  byName: ReadonlyMap<string, number> | undefined;
  /**
   * By a key's length (up to `MAX_INDEXED_NAME_LENGTH`): the one name of that length,
   * `SEVERAL`, or `NONE`. Shared by every branch of a rule whose names have the same
   * lengths in the same places (never written after `indexed`).
   */
  byLength: Int32Array;
  readonly wildcard: Node | undefined;
};

/** Names up to this length are found by their length first: most keys of a broad answer have a length no name has. */
export const MAX_INDEXED_NAME_LENGTH = 64;
/**
 * A branch of at most this many names is searched in place; past it, a name is looked up
 * in `byName` (a wide rule's names times every key of a broad answer is not linear).
 */
export const MAX_NAMES_COMPARED = 8;
export const NONE = -1;
export const SEVERAL = -2;

function draft(keep: Keep): Node {
  if (keep === true) return true;
  // Required names first, then those kept only where present (what a wildcard beside them keeps: `union`).
  const tokens = [...keep.keys()].filter((token) => token !== WILDCARD);
  const required = tokens.filter((token) => isRequired(keep, token));
  const names = [...required, ...tokens.filter((token) => !isRequired(keep, token))];
  const subs = names.map((name) => draft(keep.get(name)!));
  const wildcard = keep.get(WILDCARD);
  return {
    names,
    subs,
    required: required.length,
    byName: undefined,
    byLength: NO_TABLE,
    wildcard: wildcard === undefined ? undefined : draft(wildcard),
  };
}

const NO_TABLE = new Int32Array(0);

/**
 * Fills in the lookups of every branch, once its names are final. The length tables are
 * shared through `tables` (by what they hold): a rule of many pointers has many branches of
 * one or two names, and a table of its own each (65 entries, and an ArrayBuffer) made a
 * 300 KB rule of 20,000 pointers four tokens deep take 52.5 MB once prepared.
 */
function indexed(node: Node, tables: Map<string, Int32Array>): Node {
  if (node === true) return node;
  node.byName =
    node.names.length > MAX_NAMES_COMPARED ? new Map(node.names.map((name, index) => [name, index])) : undefined;
  const entries = new Map<number, number>();
  node.names.forEach((name, index) => {
    if (name.length <= MAX_INDEXED_NAME_LENGTH) entries.set(name.length, entries.has(name.length) ? SEVERAL : index);
  });
  const key = [...entries].map(([length, index]) => `${length}:${index}`).join(",");
  let table = tables.get(key);
  if (table === undefined) {
    table = new Int32Array(MAX_INDEXED_NAME_LENGTH + 1).fill(NONE);
    for (const [length, index] of entries) table[length] = index;
    tables.set(key, table);
  }
  node.byLength = table;
  for (const sub of node.subs) indexed(sub, tables);
  if (node.wildcard !== undefined) indexed(node.wildcard, tables);
  return node;
}

/** The index in `node.names` of `name`, or -1: by its length first (most keys have a length no name has). */
export function indexOfName(node: Branch, name: string): number {
  if (node.byName !== undefined) return node.byName.get(name) ?? -1;
  const only = name.length <= MAX_INDEXED_NAME_LENGTH ? node.byLength[name.length]! : SEVERAL;
  if (only === NONE) return -1;
  return only === SEVERAL ? node.names.indexOf(name) : node.names[only] === name ? only : -1;
}

/** Prepares a `Keep` tree for the walks (once per rule). */
export function prepareKeep(keep: Keep): Node {
  return indexed(draft(keep), new Map());
}

/** Prepared trees of the pointer lists seen: a rule's list is prepared once per set (sets are cached), not once per call. */
const PREPARED = new WeakMap<readonly string[], Node>();

/** The prepared tree of what `pointers` keep; throws `RetainError` as `buildTree` does. */
export function preparedTree(pointers: readonly string[]): Node {
  let node = PREPARED.get(pointers);
  if (node === undefined) {
    node = prepareKeep(buildTree(pointers));
    PREPARED.set(pointers, node);
  }
  return node;
}

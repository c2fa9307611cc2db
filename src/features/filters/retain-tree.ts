/**
 * The `Keep` tree of retain.ts, prepared for the one-pass walk over text (retain-text.ts):
 * each branch's names in a list, required ones first, found by a key's length before its
 * characters are compared.
 */
import { isRequired, WILDCARD, type Keep } from "./retain";

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
  // Required names first, then those kept only where present (what a wildcard beside them keeps: retain.ts).
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

/** The index in `node.names` of `name`, or -1. */
export function indexOfName(node: Branch, name: string): number {
  return node.byName === undefined ? node.names.indexOf(name) : (node.byName.get(name) ?? -1);
}

/** Prepares a `Keep` tree for `retainText` (once per rule). */
export function prepareKeep(keep: Keep): Node {
  return indexed(draft(keep), new Map());
}

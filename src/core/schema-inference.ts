/**
 * Inferring the shape of a payload for an agent that will read it back in slices.
 *
 * The reference format (a jq `walk`): an object becomes its keys (sorted) with the
 * schema of each value, an array the schema of its element, a scalar its type name
 * (`"string"`, `"number"`, `"boolean"`, `"null"`). This builder goes further:
 * - every element of an array is merged (not only the first), up to
 *   `ARRAY_MERGE_LIMIT` elements per array;
 * - a key missing from some of the merged objects is marked optional: `"email?"`;
 * - differing scalar types become a union string, `"number|string"`; a union that
 *   holds an object or an array is `{"|": [alternatives]}`.
 * Work is bounded: depth `MAX_DEPTH` (deeper is `"…"`), `MAX_KEYS` distinct keys per
 * object and `MAX_SCHEMA_KEYS` in the whole schema (the rest noted under `"…"`), a key
 * cut to `MAX_KEY_CHARS` characters: the schema of a payload of any shape stays small
 * (an object 256 wide of objects 256 wide had one of 1 MB; 30 MB from 16 MB streamed).
 *
 * The builder is driven by events (start/end object and array, key, scalar), so the
 * same code infers from a parsed value and from a JSON stream too large to parse.
 */

export const ARRAY_MERGE_LIMIT = 1_000;
export const MAX_DEPTH = 64;
export const MAX_KEYS = 256;
/** Distinct keys in the whole schema (each a node), across every object of the payload. */
export const MAX_SCHEMA_KEYS = 2_000;
/** The longest key kept whole; longer ones are cut and end in "…" (keys that then agree are one). */
export const MAX_KEY_CHARS = 100;
const MORE = "…";

export type ScalarType = "string" | "number" | "boolean" | "null";
/** What the inferred schema is made of. */
export type InferredSchema = string | InferredSchema[] | { [key: string]: InferredSchema };

const STRING = 1;
const NUMBER = 2;
const BOOLEAN = 4;
const NULL = 8;
const SCALAR_BITS: Readonly<Record<ScalarType, number>> = {
  string: STRING,
  number: NUMBER,
  boolean: BOOLEAN,
  null: NULL,
};
/** Bit order is alphabetical, so a union renders sorted. */
const SCALAR_NAMES: readonly [number, ScalarType][] = [
  [BOOLEAN, "boolean"],
  [NULL, "null"],
  [NUMBER, "number"],
  [STRING, "string"],
];

type Entry = { node: Node; seen: number; stamp: number };
/** What one inference may still add: distinct keys in all. */
type Budget = { keys: number };
type Node = {
  /** Scalar types seen here, as bits. */
  scalars: number;
  object?: { keys: Map<string, Entry>; seen: number; overflow: boolean };
  array?: { element?: Node };
};

function newNode(): Node {
  return { scalars: 0 };
}

/** Each object read gets a stamp, so a key counts once per object however often it appears. */
let stamps = 0;

function objectShape(node: Node): NonNullable<Node["object"]> {
  node.object ??= { keys: new Map(), seen: 0, overflow: false };
  node.object.seen++;
  return node.object;
}

/** The entry of `key` in an object being read (stamped `stamp`), or undefined past MAX_KEYS or the budget. */
function keyEntry(shape: NonNullable<Node["object"]>, whole: string, stamp: number, budget: Budget): Entry | undefined {
  const key = whole.length > MAX_KEY_CHARS ? `${whole.slice(0, MAX_KEY_CHARS)}${MORE}` : whole;
  let entry = shape.keys.get(key);
  if (!entry) {
    if (shape.keys.size >= MAX_KEYS || budget.keys <= 0) {
      shape.overflow = true;
      return undefined;
    }
    budget.keys--;
    entry = { node: newNode(), seen: 0, stamp: 0 };
    shape.keys.set(key, entry);
  }
  if (entry.stamp !== stamp) {
    entry.stamp = stamp;
    entry.seen++;
  }
  return entry;
}

/** One container being read: the node it fills, and what the next value belongs to. */
type Frame =
  | { kind: "object"; node: Node; shape: NonNullable<Node["object"]>; stamp: number; key?: string }
  | { kind: "array"; node: Node; merged: number };

/** Builds a schema from a sequence of JSON events (for a payload read as a stream). */
export class SchemaBuilder {
  private readonly root = newNode();
  private readonly budget: Budget = { keys: MAX_SCHEMA_KEYS };
  private readonly stack: Frame[] = [];
  /** > 0 while inside a value that is not merged (past a bound); counts nesting. */
  private skipping = 0;
  private rootSeen = false;

  /** The node the next value fills, or undefined when it is skipped. */
  private target(): Node | undefined {
    const frame = this.stack[this.stack.length - 1];
    if (!frame) {
      this.rootSeen = true;
      return this.root;
    }
    if (frame.kind === "array") {
      if (frame.merged >= ARRAY_MERGE_LIMIT) return undefined;
      frame.merged++;
      frame.node.array!.element ??= newNode();
      return frame.node.array!.element;
    }
    return keyEntry(frame.shape, frame.key ?? "", frame.stamp, this.budget)?.node;
  }

  private open(kind: "object" | "array"): void {
    if (this.skipping > 0) {
      this.skipping++;
      return;
    }
    // Past the depth bound the value still gets its place (rendered "…"), not its content.
    const node = this.target();
    if (!node || this.stack.length >= MAX_DEPTH) {
      this.skipping = 1;
      return;
    }
    if (kind === "object") this.stack.push({ kind, node, shape: objectShape(node), stamp: ++stamps });
    else {
      node.array ??= {};
      this.stack.push({ kind, node, merged: 0 });
    }
  }

  private close(): void {
    if (this.skipping > 0) this.skipping--;
    else this.stack.pop();
  }

  startObject(): void {
    this.open("object");
  }
  endObject(): void {
    this.close();
  }
  startArray(): void {
    this.open("array");
  }
  endArray(): void {
    this.close();
  }
  /** The key of the next value in the current object. */
  key(name: string): void {
    if (this.skipping > 0) return;
    const frame = this.stack[this.stack.length - 1];
    if (frame?.kind === "object") frame.key = name;
  }
  scalar(type: ScalarType): void {
    if (this.skipping > 0) return;
    const node = this.target();
    if (node) node.scalars |= SCALAR_BITS[type];
  }

  /** The schema of everything seen so far. */
  schema(): InferredSchema {
    return this.rootSeen ? render(this.root, 0) : "null";
  }
}

function render(node: Node, depth: number): InferredSchema {
  if (depth >= MAX_DEPTH) return MORE;
  const alternatives: InferredSchema[] = [];
  if (node.object) {
    const out: { [key: string]: InferredSchema } = {};
    const keys = [...node.object.keys.keys()].sort();
    for (const key of keys) {
      const entry: Entry = node.object.keys.get(key)!;
      const name = entry.seen < node.object.seen ? `${key}?` : key;
      // JSON may carry a "__proto__" member; assigning it would set the prototype instead.
      Object.defineProperty(out, name, {
        value: render(entry.node, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    if (node.object.overflow)
      out[MORE] = `more distinct keys than shown (at most ${MAX_KEYS} an object, ${MAX_SCHEMA_KEYS} in the schema)`;
    alternatives.push(out);
  }
  if (node.array) alternatives.push(node.array.element ? [render(node.array.element, depth + 1)] : []);
  const scalars = SCALAR_NAMES.filter(([bit]) => (node.scalars & bit) !== 0).map(([, name]) => name);
  if (alternatives.length === 0) return scalars.length > 0 ? scalars.join("|") : MORE;
  if (scalars.length > 0) alternatives.push(scalars.join("|"));
  return alternatives.length === 1 ? alternatives[0]! : { "|": alternatives };
}

/** Merges a parsed value into `node`: the same result as the builder's events, without them. */
function merge(node: Node, value: unknown, depth: number, budget: Budget): void {
  if (value === null) {
    node.scalars |= NULL;
    return;
  }
  switch (typeof value) {
    case "string":
      node.scalars |= STRING;
      return;
    case "number":
      node.scalars |= NUMBER;
      return;
    case "boolean":
      node.scalars |= BOOLEAN;
      return;
    case "object":
      break;
    default:
      return;
  }
  if (depth >= MAX_DEPTH) return;
  if (Array.isArray(value)) {
    node.array ??= {};
    const array = node.array;
    const end = Math.min(value.length, ARRAY_MERGE_LIMIT);
    if (end === 0) return;
    array.element ??= newNode();
    const element = array.element;
    for (let i = 0; i < end; i++) merge(element, value[i], depth + 1, budget);
    return;
  }
  const shape = objectShape(node);
  const stamp = ++stamps;
  const object = value as Record<string, unknown>;
  for (const key in object) {
    const entry = keyEntry(shape, key, stamp, budget);
    if (entry) merge(entry.node, object[key], depth + 1, budget);
  }
}

/** Infers the schema of a parsed JSON value. */
export function inferSchema(value: unknown): InferredSchema {
  const root = newNode();
  merge(root, value, 0, { keys: MAX_SCHEMA_KEYS });
  return render(root, 0);
}

/** How far `largestArray` looks: levels, and values visited. */
const LARGEST_ARRAY_MAX_DEPTH = 8;
const LARGEST_ARRAY_MAX_VISITS = 10_000;

/** Where the longest array of a payload is (a JSON Pointer) and how many items it has; undefined when there is none. */
export type ArrayLocation = { readonly pointer: string; readonly count: number };

/**
 * The longest array in `value` (the shallowest among equals), looked for down to
 * `LARGEST_ARRAY_MAX_DEPTH` levels and across `LARGEST_ARRAY_MAX_VISITS` values: what an
 * agent most likely wants to page through.
 */
export function largestArray(value: unknown): ArrayLocation | undefined {
  let best: ArrayLocation | undefined;
  let visits = 0;
  const queue: { value: unknown; pointer: string; depth: number }[] = [{ value, pointer: "", depth: 0 }];
  for (let at = 0; at < queue.length && visits < LARGEST_ARRAY_MAX_VISITS; at++) {
    const { value: here, pointer, depth } = queue[at]!;
    visits++;
    if (typeof here !== "object" || here === null) continue;
    if (Array.isArray(here) && here.length > (best?.count ?? 0)) best = { pointer, count: here.length };
    if (depth >= LARGEST_ARRAY_MAX_DEPTH) continue;
    // Arrays: the first element stands for the others (their shape was merged into the schema).
    const entries: [string, unknown][] = Array.isArray(here)
      ? here.length > 0
        ? [["0", here[0]]]
        : []
      : Object.entries(here);
    for (const [token, child] of entries)
      if (queue.length < LARGEST_ARRAY_MAX_VISITS)
        queue.push({
          value: child,
          pointer: `${pointer}/${token.replace(/~/g, "~0").replace(/\//g, "~1")}`,
          depth: depth + 1,
        });
  }
  return best;
}

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
 * object (the rest counted under `"…"`).
 *
 * The builder is driven by events (start/end object and array, key, scalar), so the
 * same code infers from a parsed value and from a JSON stream too large to parse.
 */

export const ARRAY_MERGE_LIMIT = 1_000;
export const MAX_DEPTH = 64;
export const MAX_KEYS = 256;
const MORE = "…";

export type ScalarType = "string" | "number" | "boolean" | "null";
/** What the inferred schema is made of. */
export type InferredSchema = string | InferredSchema[] | { [key: string]: InferredSchema };

type Node = {
  scalars: Set<ScalarType>;
  object?: { keys: Map<string, { node: Node; seen: number }>; seen: number; overflow: boolean };
  array?: { element?: Node };
};

function newNode(): Node {
  return { scalars: new Set() };
}

/** One container being read: the node it fills, and what the next value belongs to. */
type Frame =
  | { kind: "object"; node: Node; present: Set<string>; key?: string }
  | { kind: "array"; node: Node; merged: number };

/** Builds a schema from a sequence of JSON events. */
export class SchemaBuilder {
  private readonly root = newNode();
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
    const key = frame.key ?? "";
    const object = frame.node.object!;
    let entry = object.keys.get(key);
    if (!entry) {
      if (object.keys.size >= MAX_KEYS) {
        object.overflow = true;
        return undefined;
      }
      entry = { node: newNode(), seen: 0 };
      object.keys.set(key, entry);
    }
    if (!frame.present.has(key)) {
      frame.present.add(key);
      entry.seen++;
    }
    return entry.node;
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
    if (kind === "object") {
      node.object ??= { keys: new Map(), seen: 0, overflow: false };
      node.object.seen++;
      this.stack.push({ kind, node, present: new Set() });
    } else {
      node.array ??= {};
      this.stack.push({ kind, node, merged: 0 });
    }
  }

  private close(): void {
    if (this.skipping > 0) {
      this.skipping--;
      return;
    }
    this.stack.pop();
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
    this.target()?.scalars.add(type);
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
      const entry: { node: Node; seen: number } = node.object.keys.get(key)!;
      const name = entry.seen < node.object.seen ? `${key}?` : key;
      out[name] = render(entry.node, depth + 1);
    }
    if (node.object.overflow) out[MORE] = `more than ${MAX_KEYS} distinct keys`;
    alternatives.push(out);
  }
  if (node.array) alternatives.push(node.array.element ? [render(node.array.element, depth + 1)] : []);
  const scalars = [...node.scalars].sort();
  if (alternatives.length === 0) return scalars.length > 0 ? scalars.join("|") : MORE;
  if (scalars.length > 0) alternatives.push(scalars.join("|"));
  return alternatives.length === 1 ? alternatives[0]! : { "|": alternatives };
}

function walk(value: unknown, builder: SchemaBuilder): void {
  if (value === null) builder.scalar("null");
  else if (Array.isArray(value)) {
    builder.startArray();
    const end = Math.min(value.length, ARRAY_MERGE_LIMIT);
    for (let i = 0; i < end; i++) walk(value[i], builder);
    builder.endArray();
  } else if (typeof value === "object") {
    builder.startObject();
    for (const key of Object.keys(value)) {
      builder.key(key);
      walk((value as Record<string, unknown>)[key], builder);
    }
    builder.endObject();
  } else {
    const type = typeof value;
    builder.scalar(type === "string" || type === "number" || type === "boolean" ? type : "null");
  }
}

/** Infers the schema of a parsed JSON value. */
export function inferSchema(value: unknown): InferredSchema {
  const builder = new SchemaBuilder();
  walk(value, builder);
  return builder.schema();
}

/**
 * The index of an offloaded JSON payload, so that a pointer read fetches a few byte
 * ranges from R2 instead of parsing the whole payload (32 MiB parsed per read took
 * hundreds of MB across concurrent reads).
 *
 * Written at offload time beside the payload (`payloads/<id>.index`), built from the
 * same text as it is stored, by the push tokenizer. It lists every large value (an
 * array, object or string of at least `INDEXED_VALUE_BYTES`, down to
 * `MAX_INDEXED_DEPTH`) with its byte span and, for containers, its count and
 * checkpoints: the byte offset of an element (or member value, with its key) every
 * `spacing` bytes, and of each of an object's first `DENSE_MEMBERS` members. A reader
 * starts at the nearest checkpoint and tokenizes forward. The index stays under
 * `MAX_INDEX_BYTES`: when it would grow past, checkpoints are thinned (spacing
 * doubles), then the deepest values are dropped. What is not indexed is small, or is
 * read by a bounded scan that says so when it cannot finish.
 */
import { JsonStreamTokenizer, type JsonStreamHandler } from "../core/json-stream";
import { Utf8Position } from "../core/utf8-position";
import { PAYLOAD_KEY_PREFIX } from "./payload-store";

export const INDEX_VERSION = 1;
/** Values at least this large (raw bytes) are indexed. */
export const INDEXED_VALUE_BYTES = 32 * 1024;
export const MAX_INDEXED_DEPTH = 16;
/** Initial distance between checkpoints of a container (bytes). */
export const CHECKPOINT_SPACING_BYTES = 32 * 1024;
const MAX_CHECKPOINT_SPACING_BYTES = 1024 * 1024;
/** An object's first members are all listed, so a key among them is found without a scan. */
export const DENSE_MEMBERS = 256;
/** Keys longer than this are not listed (their object is then scanned for them). */
const MAX_LISTED_KEY_CHARS = 1024;
export const MAX_INDEX_BYTES = 1024 * 1024;
/** Rough bytes one checkpoint and one value take in the stored JSON. */
const CHECKPOINT_COST_BYTES = 20;
const VALUE_COST_BYTES = 60;
/** Enough rounds to reach the widest spacing and then the shallowest depth. */
const MAX_SHRINK_ROUNDS = 32;

/** A checkpoint: element or member number, byte offset of its value, and for a member its key. */
export type Checkpoint = [number, number] | [number, number, string];

/** One indexed value: pointer tokens, type, byte span [s, e), count, checkpoints, and whether every member is listed. */
export type IndexedValue = {
  readonly p: readonly string[];
  readonly t: "a" | "o" | "s";
  readonly s: number;
  readonly e: number;
  /** Elements of an array, members of an object (0 for a string). */
  readonly n: number;
  c: Checkpoint[];
  /** Objects: every member has a checkpoint (a key not among them is not there). */
  all?: boolean;
};

export type PayloadIndex = { readonly v: number; readonly size: number; readonly values: IndexedValue[] };

export function indexKey(id: string): string {
  return `${PAYLOAD_KEY_PREFIX}${id}.index`;
}

type Frame = {
  readonly kind: "a" | "o";
  /** Where it is: its parent's frame and its own token (the pointer is built only for a value indexed). */
  readonly parent: Frame | undefined;
  readonly token: string | number | undefined;
  readonly start: number;
  count: number;
  key: string | undefined;
  lastCheckpoint: number;
  checkpoints: Checkpoint[];
  all: boolean;
};

/**
 * Builds the index of a JSON text fed in pieces (the exact text that is stored): either
 * tokenizing the pieces itself (`write`), or following the events of a tokenizer that
 * reads a larger text the payload is part of (`follow`, then the handler methods), so
 * that the payload is tokenized once for storing, inferring and indexing.
 */
export class PayloadIndexer implements JsonStreamHandler {
  private readonly tokenizer: JsonStreamTokenizer;
  private readonly position = new Utf8Position();
  /** Following: the byte offset, in the larger text, where the payload starts. */
  private origin = 0;
  private following = false;
  private ended: boolean | undefined;
  /** Open containers; null for those deeper than indexed. */
  private readonly frames: (Frame | null)[] = [];
  private readonly values: IndexedValue[] = [];
  private spacing = CHECKPOINT_SPACING_BYTES;
  private maxDepth = MAX_INDEXED_DEPTH;
  private cost = 0;
  private startByte = 0;
  /** The value being read: its parent's frame and its token (a member's key, an element's number). */
  private valueParent: Frame | undefined;
  private valueToken: string | number | undefined;
  private closing: Frame | null = null;
  private lastScalar: string | undefined;
  private size = 0;
  private failed = false;

  /** `also` hears the events of the text this indexer tokenizes itself (`write`): the schema builder, say. */
  constructor(also?: JsonStreamHandler) {
    this.tokenizer = new JsonStreamTokenizer(also ? bothHandlers(this, also) : this);
  }

  /** Feeds the next piece of the payload's text. */
  write(text: string): void {
    if (this.failed || text === "") return;
    this.position.next(text);
    try {
      this.tokenizer.write(text);
    } catch {
      this.failed = true; // not JSON: no index, and pointer reads will say so
    }
  }

  /**
   * Follows another tokenizer: `chunk` is the piece it reads now. The first call gives
   * `start`, where the payload begins in it; every later chunk comes whole. The caller
   * then hands on the tokenizer's events for the payload's values, from its first.
   */
  follow(chunk: string, start?: number): void {
    this.position.next(chunk);
    if (start === undefined) return;
    this.following = true;
    this.origin = this.position.at(start);
  }

  /** Whether the text written was one whole JSON value (`write` only; asked once it has all been written). */
  complete(): boolean {
    if (this.ended === undefined) {
      try {
        if (!this.failed) this.tokenizer.end();
        this.ended = !this.failed;
      } catch {
        this.ended = false;
      }
    }
    return this.ended;
  }

  /** The index, or undefined when the text was not one JSON value. */
  end(size: number): PayloadIndex | undefined {
    if (!this.following && !this.complete()) return undefined;
    this.size = size;
    if (this.closing) this.finish(this.closing, size);
    return { v: INDEX_VERSION, size: this.size, values: this.values };
  }

  private top(): Frame | null | undefined {
    return this.frames[this.frames.length - 1];
  }

  valueStart(index: number): void {
    const at = this.position.at(index) - this.origin;
    this.startByte = at;
    this.lastScalar = undefined;
    const parent = this.top();
    if (parent === undefined) {
      this.valueParent = undefined;
      this.valueToken = undefined;
      return;
    }
    if (parent === null) return;
    const number = parent.count++;
    if (parent.kind === "a") {
      this.valueParent = parent;
      this.valueToken = number;
      if (number === 0 || at - parent.lastCheckpoint >= this.spacing) this.checkpoint(parent, [number, at]);
    } else {
      const key = parent.key ?? "";
      this.valueParent = parent;
      this.valueToken = key;
      const listable = key.length <= MAX_LISTED_KEY_CHARS;
      if (!listable || number >= DENSE_MEMBERS) parent.all = false;
      if (listable && (number < DENSE_MEMBERS || at - parent.lastCheckpoint >= this.spacing))
        this.checkpoint(parent, [number, at, key]);
    }
  }

  private checkpoint(frame: Frame, checkpoint: Checkpoint): void {
    frame.checkpoints.push(checkpoint);
    frame.lastCheckpoint = checkpoint[1];
    this.cost += CHECKPOINT_COST_BYTES + (checkpoint[2]?.length ?? 0);
  }

  private open(kind: "a" | "o"): void {
    if (this.frames.length >= this.maxDepth || this.top() === null) {
      this.frames.push(null);
      return;
    }
    this.frames.push({
      kind,
      parent: this.valueParent,
      token: this.valueToken,
      start: this.startByte,
      count: 0,
      key: undefined,
      lastCheckpoint: this.startByte,
      checkpoints: [],
      all: true,
    });
  }

  private close(): void {
    const frame = this.frames.pop();
    if (frame) {
      this.cost -= frame.checkpoints.reduce((sum, c) => sum + CHECKPOINT_COST_BYTES + (c[2]?.length ?? 0), 0);
      this.closing = frame;
    }
  }

  startObject(): void {
    this.open("o");
  }
  startArray(): void {
    this.open("a");
  }
  endObject(): void {
    this.close();
  }
  endArray(): void {
    this.close();
  }
  key(name: string): void {
    const frame = this.top();
    if (frame) frame.key = name;
  }
  scalar(type: string): void {
    this.lastScalar = type;
  }

  valueEnd(index: number): void {
    const end = this.position.at(index) - this.origin;
    if (this.closing) {
      this.finish(this.closing, end);
      this.closing = null;
    } else if (
      this.lastScalar === "string" &&
      end - this.startByte >= INDEXED_VALUE_BYTES &&
      this.top() !== null &&
      this.frames.length < this.maxDepth
    ) {
      this.add({ p: pointerTokens(this.valueParent, this.valueToken), t: "s", s: this.startByte, e: end, n: 0, c: [] });
    }
  }

  private finish(frame: Frame, end: number): void {
    if (end - frame.start < INDEXED_VALUE_BYTES) return;
    this.add({
      p: pointerTokens(frame.parent, frame.token),
      t: frame.kind,
      s: frame.start,
      e: end,
      n: frame.count,
      c: frame.checkpoints,
      ...(frame.kind === "o" ? { all: frame.all } : {}),
    });
  }

  private add(value: IndexedValue): void {
    this.values.push(value);
    this.cost +=
      VALUE_COST_BYTES +
      value.p.reduce((sum, token) => sum + token.length + 3, 0) +
      value.c.reduce((sum, c) => sum + CHECKPOINT_COST_BYTES + (c[2]?.length ?? 0), 0);
    for (let round = 0; this.cost > MAX_INDEX_BYTES && round < MAX_SHRINK_ROUNDS; round++) this.shrink();
  }

  /** Halves every checkpoint list (spacing doubles); past the widest spacing, drops the deepest values. */
  private shrink(): void {
    if (this.spacing < MAX_CHECKPOINT_SPACING_BYTES) {
      this.spacing *= 2;
      const thin = (list: Checkpoint[]) => list.filter((_, i) => i % 2 === 0);
      for (const value of this.values) {
        if (value.c.length > 1) {
          value.c = thin(value.c);
          if (value.t === "o") value.all = false;
        }
      }
      for (const frame of this.frames) {
        if (frame && frame.checkpoints.length > 1) {
          frame.checkpoints = thin(frame.checkpoints);
          frame.all = false;
        }
      }
    } else if (this.maxDepth > 1) {
      this.maxDepth--;
      for (let i = 0; i < this.values.length; ) {
        if (this.values[i]!.p.length >= this.maxDepth) this.values.splice(i, 1);
        else i++;
      }
      for (let depth = this.maxDepth; depth < this.frames.length; depth++) this.frames[depth] = null;
    } else {
      this.values.length = 0; // nothing left to give up: an empty index (reads scan, within their bound)
    }
    this.cost = this.values.reduce(
      (sum, v) =>
        sum +
        VALUE_COST_BYTES +
        v.p.reduce((s, t) => s + t.length + 3, 0) +
        v.c.reduce((s, c) => s + CHECKPOINT_COST_BYTES + (c[2]?.length ?? 0), 0),
      0,
    );
    this.cost += this.frames.reduce(
      (sum, f) => sum + (f ? f.checkpoints.reduce((s, c) => s + CHECKPOINT_COST_BYTES + (c[2]?.length ?? 0), 0) : 0),
      0,
    );
  }
}

/** The reference tokens of the value with `token` in `parent` (built for indexed values only: most values are not). */
function pointerTokens(parent: Frame | undefined, token: string | number | undefined): string[] {
  const tokens: string[] = [];
  for (let frame = parent, own = token; own !== undefined; own = frame?.token, frame = frame?.parent)
    tokens.push(String(own));
  return tokens.reverse();
}

/** A handler that hands every event to `first`, then to `second`. */
function bothHandlers(first: JsonStreamHandler, second: JsonStreamHandler): JsonStreamHandler {
  return {
    valueStart: (index) => {
      first.valueStart?.(index);
      second.valueStart?.(index);
    },
    valueEnd: (index) => {
      first.valueEnd?.(index);
      second.valueEnd?.(index);
    },
    startObject: () => {
      first.startObject?.();
      second.startObject?.();
    },
    endObject: () => {
      first.endObject?.();
      second.endObject?.();
    },
    startArray: () => {
      first.startArray?.();
      second.startArray?.();
    },
    endArray: () => {
      first.endArray?.();
      second.endArray?.();
    },
    key: (name) => {
      first.key?.(name);
      second.key?.(name);
    },
    scalar: (type) => {
      first.scalar?.(type);
      second.scalar?.(type);
    },
  };
}

/** The indexed array with the most elements (the shallowest among equals), as a JSON Pointer and count. */
export function largestIndexedArray(index: PayloadIndex): { pointer: string; count: number } | undefined {
  let best: IndexedValue | undefined;
  for (const value of index.values) {
    if (value.t === "a" && (!best || value.n > best.n || (value.n === best.n && value.p.length < best.p.length)))
      best = value;
  }
  return (
    best && { pointer: best.p.map((t) => `/${t.replace(/~/g, "~0").replace(/\//g, "~1")}`).join(""), count: best.n }
  );
}

/** Indexes a payload whose whole text is at hand. */
export function indexPayloadText(text: string, size: number): PayloadIndex | undefined {
  const indexer = new PayloadIndexer();
  indexer.write(text);
  return indexer.end(size);
}

/** Stores the index of payload `id` (with the payload's own metadata: same owner, same expiry). */
export async function putPayloadIndex(
  bucket: R2Bucket,
  id: string,
  index: PayloadIndex,
  customMetadata?: Record<string, string>,
): Promise<void> {
  await bucket.put(indexKey(id), JSON.stringify(index), {
    httpMetadata: { contentType: "application/json" },
    ...(customMetadata ? { customMetadata } : {}),
  });
}

function isIndex(value: unknown): value is PayloadIndex {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { v?: unknown }).v === INDEX_VERSION &&
    Array.isArray((value as { values?: unknown }).values)
  );
}

/** The stored index of payload `id`, or undefined when it has none (stored before indexes existed). */
export async function loadPayloadIndex(bucket: R2Bucket, id: string): Promise<PayloadIndex | undefined> {
  const object = await bucket.get(indexKey(id));
  if (!object) return undefined;
  const parsed: unknown = JSON.parse(await object.text());
  return isIndex(parsed) ? parsed : undefined;
}

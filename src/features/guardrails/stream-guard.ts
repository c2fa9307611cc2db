/**
 * Checks an answer too large to hold as it streams on to offload (and so to R2): the
 * JSON-RPC message is tokenized as it arrives, every byte outside `result`'s strings passes
 * as the upstream sent it, and each string inside `result` is decoded, read by the rules'
 * detectors, redacted and re-encoded on the way. Offload then builds its preview, its
 * inferred schema and its stored payload from what the rules allow, so every read path is.
 *
 * A string of megabytes is read through a window: text is handed on once more than
 * STREAMED_MATCH_WINDOW_CHARS follow it, and a finding that starts before that point keeps
 * the text up to its end. A match no longer than the window is therefore always found
 * whole, wherever the chunks were cut; a longer one (an operator's unbounded pattern, a
 * private key block with no END line within the window) may be found in part, or missed.
 * Members named like a secret have their value replaced whatever its type; base64 data of
 * images, audio and blobs is not read (as guard-json.ts). A `block` finding stops the
 * stream, so offload's upload is aborted and nothing is stored.
 */
import { JsonStreamTokenizer, type JsonStreamHandler } from "../../core/json-stream";
import { textSlices } from "../../core/text-slices";
import { secretKeyMatcher } from "../audit/secret-keys";
import { detect, type DetectorContext, type Finding } from "./detectors";
import type { GuardRule } from "./document";
import { markFindings, type GuardHit } from "./guard-json";

/** The longest match always found whole in a streamed string (UTF-16 code units): the longest built-in format is a JWT of about 12,300. */
export const STREAMED_MATCH_WINDOW_CHARS = 16 * 1024;
/** A streamed string is read once this much of it is waiting (so the window is re-read at most once per this many). */
const READ_AT_CHARS = 4 * STREAMED_MATCH_WINDOW_CHARS;
const SECRET_FIELD_MARKER = JSON.stringify("[redacted: secret-field]");

/** Thrown into the stream when a `block` rule finds something: offload aborts its upload. */
export class StreamBlocked extends Error {
  override readonly name = "StreamBlocked";
  readonly rule: GuardRule;
  readonly kind: string;
  constructor(rule: GuardRule, kind: string) {
    super(`guardrail ${rule.name} blocked a streamed result`);
    this.rule = rule;
    this.kind = kind;
  }
}

type Frame = { key: string | undefined; binary: boolean };
type Capture = { pending: string; type: boolean; head: string };

class StreamRedactor implements JsonStreamHandler {
  readonly hits = new Map<string, GuardHit>();
  private readonly frames: Frame[] = [];
  private chunk = "";
  private from = 0;
  private out: string[] = [];
  private valueAt = 0;
  private capture: Capture | null = null;
  /** The depth whose value is replaced by a marker (a secret's), while it is read. */
  private suppressed: number | null = null;
  private secretNext = false;
  private readonly isSecretKey: (key: string) => boolean;
  private readonly secretRules: readonly GuardRule[];

  constructor(
    private readonly rules: readonly GuardRule[],
    private readonly context: DetectorContext,
  ) {
    this.isSecretKey = secretKeyMatcher(context.secretKeys);
    this.secretRules = rules.filter((rule) => rule.detectors.includes("secrets"));
  }

  /** The checked text of `chunk`. */
  write(tokenizer: JsonStreamTokenizer, chunk: string): string {
    this.chunk = chunk;
    this.from = 0;
    this.out = [];
    tokenizer.write(chunk);
    if (!this.capture && this.suppressed === null) this.out.push(chunk.slice(this.from));
    return this.out.join("");
  }

  private hit(rule: GuardRule, detector: string, kind: string): void {
    const key = `${rule.name}\n${detector}\n${kind}`;
    const known = this.hits.get(key);
    if (known) known.count++;
    else this.hits.set(key, { rule: rule.name, action: rule.action, detector, kind, where: "result", count: 1 });
    if (rule.action === "block") throw new StreamBlocked(rule, kind);
  }

  private inResult(): boolean {
    return this.frames.length >= 2 && this.frames[0]!.key === "result";
  }

  valueStart(index: number): void {
    if (this.suppressed !== null) return;
    this.valueAt = index;
    if (!this.secretNext) return;
    this.secretNext = false;
    for (const rule of this.secretRules) this.hit(rule, "secrets", "secret-field");
    if (!this.secretRules.some((rule) => rule.action === "redact")) return;
    this.out.push(this.chunk.slice(this.from, index), SECRET_FIELD_MARKER);
    this.suppressed = this.frames.length;
  }

  valueEnd(index: number): void {
    if (this.capture) {
      this.out.push(this.read(true), '"');
      this.capture = null;
      this.from = index;
    } else if (this.suppressed === this.frames.length) {
      this.suppressed = null;
      this.from = index;
    }
  }

  startObject(): void {
    this.frames.push({ key: undefined, binary: false });
  }
  endObject(): void {
    this.frames.pop();
  }
  startArray(): void {
    this.frames.push({ key: undefined, binary: false });
  }
  endArray(): void {
    this.frames.pop();
  }

  key(name: string): void {
    const top = this.frames[this.frames.length - 1]!;
    top.key = name;
    this.secretNext =
      this.suppressed === null && this.secretRules.length > 0 && this.inResult() && this.isSecretKey(name);
  }

  wantString(): boolean {
    if (this.suppressed !== null || !this.inResult()) return false;
    const top = this.frames[this.frames.length - 1]!;
    if (top.key === "blob" || (top.binary && top.key === "data")) return false;
    this.out.push(this.chunk.slice(this.from, this.valueAt), '"');
    this.capture = { pending: "", type: top.key === "type", head: "" };
    return true;
  }

  stringChunk(piece: string): void {
    const capture = this.capture!;
    if (capture.type && capture.head.length < 8) capture.head += piece.slice(0, 8);
    capture.pending += piece;
    if (capture.pending.length >= READ_AT_CHARS) this.out.push(this.read(false));
  }

  stringEnd(): void {
    const capture = this.capture!;
    if (capture.type && /^(?:image|audio)$/.test(capture.head)) this.frames[this.frames.length - 1]!.binary = true;
  }

  /** The escaped text of the captured string that can be handed on (all of it when `final`), redacted. */
  private read(final: boolean): string {
    const capture = this.capture!;
    const text = capture.pending;
    const found = new Map<string, Finding[]>();
    const all = (detector: string) => {
      const known = found.get(detector);
      if (known) return known;
      const list = detect(detector, text, this.context);
      found.set(detector, list);
      return list;
    };
    let commit = final ? text.length : text.length - STREAMED_MATCH_WINDOW_CHARS;
    const every = this.rules.flatMap((rule) => rule.detectors.flatMap(all));
    if (every.length === 0) {
      // Most strings hold nothing: no sorting, splicing or marking for them.
      capture.pending = text.slice(commit);
      return escaped(text.slice(0, commit));
    }
    every.sort((a, b) => a.start - b.start);
    for (const finding of every) if (finding.start < commit) commit = Math.max(commit, finding.end);
    // Never between the halves of a surrogate pair.
    const unit = text.charCodeAt(commit - 1);
    if (commit < text.length && unit >= 0xd800 && unit <= 0xdbff) commit--;
    const redacted: Finding[] = [];
    for (const rule of this.rules) {
      for (const detector of rule.detectors) {
        const before = all(detector).filter((finding) => finding.start < commit);
        for (const finding of before) this.hit(rule, detector, finding.kind);
        if (rule.action === "redact") redacted.push(...before);
      }
    }
    capture.pending = text.slice(commit);
    return escaped(markFindings(text.slice(0, commit), redacted));
  }
}

/** `text` as the inside of a JSON string. */
function escaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/**
 * `body` (a JSON-RPC answer's bytes) as `rules` allow it, checked as it is read; the
 * stream errors with StreamBlocked when a `block` rule finds something. `done` gets the
 * hits once the answer has been read to its end.
 *
 * @example
 * const text = await offloadTake(guardedStream(body, rules, context, (hits) => record(ctx, hits)));
 */
export function guardedStream(
  body: ReadableStream<Uint8Array>,
  rules: readonly GuardRule[],
  context: DetectorContext,
  done: (hits: GuardHit[]) => void,
): ReadableStream<Uint8Array> {
  const reader = textSlices(body);
  const redactor = new StreamRedactor(rules, context);
  const tokenizer = new JsonStreamTokenizer(redactor);
  const encoder = new TextEncoder();
  const finish = () => done([...redactor.hits.values()]);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) {
          tokenizer.end();
          finish();
          controller.close();
          return;
        }
        let text: string;
        try {
          text = redactor.write(tokenizer, value);
        } catch (error) {
          finish();
          await reader.cancel().catch(() => {});
          throw error;
        }
        if (text !== "") {
          controller.enqueue(encoder.encode(text));
          return;
        }
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

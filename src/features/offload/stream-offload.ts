/**
 * Offloading a result larger than the isolate can hold: the upstream's JSON-RPC answer
 * is read as it arrives, its payload copied to R2 in multipart parts while the preview
 * and the inferred schema are computed on the way. Memory stays at about one part.
 *
 * The payload is `result.structuredContent` (its raw text) or, when a text block comes
 * first and is large, that block's decoded text (for SDK servers, the same JSON). A text
 * candidate is held back until it passes `TEXT_COMMIT_CHARS`, so a short "see
 * structuredContent" text never wins over the data. The pointer-read index of the
 * payload (payload-index.ts) is built in the same pass and stored after it: the
 * tokenizer that finds structuredContent drives the index and the schema too, and a
 * text block's JSON is tokenized once, by the indexer, which feeds the schema.
 */
import { textSlices } from "../../core/text-slices";
import { isId, type JsonRpcId } from "../../core/jsonrpc";
import { JsonStreamTokenizer, type JsonStreamHandler } from "../../core/json-stream";
import { SchemaBuilder, type InferredSchema, type ScalarType } from "../../core/schema-inference";
import { largestIndexedArray, PayloadIndexer, putPayloadIndex, type PayloadIndex } from "../../storage/payload-index";
import { startPayloadUpload, type PayloadMetadata } from "../../storage/payload-store";

/** R2 multipart parts: all but the last the same size, at least 5 MiB. */
export const PART_BYTES = 8 * 1024 * 1024;
const TEXT_COMMIT_CHARS = 64 * 1024;
const JSON_TYPE = "application/json";
const TEXT_TYPE = "text/plain; charset=utf-8";

export type StreamedPayload = {
  readonly size: number;
  readonly contentType: string;
  readonly preview: string;
  readonly schema: InferredSchema;
  /** True when the answer had `structuredContent` (whichever part was stored). */
  readonly structured: boolean;
  /** The longest indexed array (large ones only), for the instructions. */
  readonly array?: { readonly pointer: string; readonly count: number } | undefined;
  /** The answer's own top-level `id` (undefined when it had none that is an id): whose answer it is. */
  readonly messageId: JsonRpcId | undefined;
};

/** The longest `id` text read off a streamed answer; a longer one is no id the gateway sent. */
const MAX_ID_CHARS = 1024;

/**
 * Uploads text in fixed-size parts as it comes; the upload starts with the first part.
 * Text is encoded straight into one part buffer, reused for every part (R2 has taken a
 * part once `uploadPart` resolves): no encoded copy of each piece and no fresh 8 MiB
 * array per part for the garbage collector to find late.
 */
class PartUploader {
  private part: Uint8Array | undefined;
  private filled = 0;
  /** What did not fit in the full part before it was sent (always empty while the part has room). */
  private overflow: Uint8Array[] = [];
  private readonly parts: R2UploadedPart[] = [];
  private upload: R2MultipartUpload | undefined;
  private readonly encoder = new TextEncoder();
  size = 0;

  constructor(private readonly start: () => Promise<R2MultipartUpload>) {}

  write(text: string): void {
    if (text === "") return;
    if (this.overflow.length === 0) {
      this.part ??= new Uint8Array(PART_BYTES);
      // Whole characters only: a character that does not fit stays for the overflow.
      const { read, written } = this.encoder.encodeInto(text, this.part.subarray(this.filled));
      this.filled += written;
      this.size += written;
      if (read === text.length) return;
      text = text.slice(read);
    }
    const bytes = this.encoder.encode(text);
    this.overflow.push(bytes);
    this.size += bytes.length;
  }

  /** Moves what overflowed into the emptied part. */
  private refill(): void {
    const part = this.part!;
    while (this.overflow.length > 0 && this.filled < PART_BYTES) {
      const piece = this.overflow[0]!;
      const take = Math.min(piece.length, PART_BYTES - this.filled);
      part.set(piece.subarray(0, take), this.filled);
      this.filled += take;
      if (take === piece.length) this.overflow.shift();
      else this.overflow[0] = piece.subarray(take);
    }
  }

  /** Sends every full part and waits for it: the upstream is read no faster than R2 stores. */
  async flush(final = false): Promise<void> {
    while (this.part && (this.filled === PART_BYTES || (final && this.filled > 0))) {
      this.upload ??= await this.start();
      const body = this.filled === PART_BYTES ? this.part : this.part.subarray(0, this.filled);
      this.parts.push(await this.upload.uploadPart(this.parts.length + 1, body));
      this.filled = 0;
      this.refill();
    }
  }

  async complete(): Promise<void> {
    await this.flush(true);
    await this.upload?.complete(this.parts);
  }

  async abort(): Promise<void> {
    await this.upload?.abort().catch(() => {});
  }
}

type Frame = { kind: "object" | "array"; key: string | undefined };
type TextCandidate = { held: string; committed: boolean; json: boolean | null };

/** Follows where the tokenizer is, and copies the payload out. */
class PayloadCapture implements JsonStreamHandler {
  private readonly frames: Frame[] = [];
  private chunk = "";
  /** Raw capture of structuredContent: the depth of its container, and where it resumes in the chunk. */
  private raw: { depth: number; from: number } | null = null;
  private text: TextCandidate | null = null;
  readonly builder = new SchemaBuilder();
  /**
   * The pointer-read index of the stored text. For structuredContent it follows this
   * capture's own tokenizer; a text block's JSON it tokenizes itself, once, for the
   * schema too.
   */
  readonly indexer = new PayloadIndexer(this.textSchemaEvents());
  preview = "";
  kind: "structured" | "text" | null = null;
  /** Whether the answer has `result.structuredContent` at all (its tool then has an outputSchema). */
  sawStructured = false;
  contentType = JSON_TYPE;
  finished = false;
  /** The top-level `id` being read (its text so far, and where it resumes in the chunk), then what it was. */
  private id: { text: string; from: number } | null = null;
  messageId: JsonRpcId | undefined;

  constructor(
    private readonly previewChars: number,
    private readonly uploader: PartUploader,
  ) {}

  setChunk(chunk: string): void {
    this.chunk = chunk;
    if (this.id) this.id.from = 0;
    if (this.raw) {
      this.raw.from = 0;
      this.indexer.follow(chunk);
    }
  }

  endChunk(): void {
    if (this.raw) this.emit(this.chunk.slice(this.raw.from));
    if (this.id && this.id.text.length <= MAX_ID_CHARS)
      this.id.text += this.chunk.slice(this.id.from, this.id.from + MAX_ID_CHARS + 1);
  }

  private emit(text: string): void {
    if (this.preview.length < this.previewChars) this.preview += text.slice(0, this.previewChars - this.preview.length);
    this.uploader.write(text);
    if (this.kind === "text") this.indexer.write(text);
  }

  private path(): string {
    return this.frames.map((f) => (f.kind === "array" ? "[]" : (f.key ?? ""))).join("/");
  }

  valueStart(index: number): void {
    if (this.frames.length === 1 && this.frames[0]!.kind === "object" && this.frames[0]!.key === "id")
      this.id = { text: "", from: index };
    if (!this.kind && this.frames.length === 2 && this.path() === "result/structuredContent") {
      this.kind = "structured";
      this.raw = { depth: this.frames.length, from: index };
      this.indexer.follow(this.chunk, index);
    }
    if (this.raw) this.indexer.valueStart(index);
  }

  valueEnd(index: number): void {
    if (this.id && this.frames.length === 1) {
      const text =
        this.id.text.length <= MAX_ID_CHARS
          ? this.id.text + this.chunk.slice(this.id.from, Math.min(index, this.id.from + MAX_ID_CHARS + 1))
          : "";
      this.id = null;
      this.messageId = undefined;
      if (text.length > 0 && text.length <= MAX_ID_CHARS) {
        try {
          const id = JSON.parse(text) as unknown;
          if (isId(id)) this.messageId = id;
        } catch {
          // not an id: the answer is nobody's
        }
      }
    }
    if (this.raw) this.indexer.valueEnd(index);
    if (this.raw && this.frames.length === this.raw.depth) {
      this.emit(this.chunk.slice(this.raw.from, index));
      this.raw = null;
      this.finished = true;
    }
  }

  startObject(): void {
    if (this.raw) {
      this.builder.startObject();
      this.indexer.startObject();
    }
    this.frames.push({ kind: "object", key: undefined });
  }
  endObject(): void {
    this.frames.pop();
    if (this.raw) {
      this.builder.endObject();
      this.indexer.endObject();
    }
  }
  startArray(): void {
    if (this.raw) {
      this.builder.startArray();
      this.indexer.startArray();
    }
    this.frames.push({ kind: "array", key: undefined });
  }
  endArray(): void {
    this.frames.pop();
    if (this.raw) {
      this.builder.endArray();
      this.indexer.endArray();
    }
  }
  key(name: string): void {
    this.frames[this.frames.length - 1]!.key = name;
    if (name === "structuredContent" && this.frames.length === 2 && this.frames[0]!.key === "result")
      this.sawStructured = true;
    if (this.raw && this.frames.length > this.raw.depth) {
      this.builder.key(name);
      this.indexer.key(name);
    }
  }
  scalar(type: ScalarType): void {
    if (this.raw) {
      this.builder.scalar(type);
      this.indexer.scalar(type);
    }
  }

  /** Collects `result.content[i].text` while no payload is chosen yet. */
  wantString(): boolean {
    if (this.kind) return false;
    const wanted = this.frames.length === 4 && this.path() === "result/content/[]/text";
    if (wanted) this.text = { held: "", committed: false, json: null };
    return wanted;
  }

  stringChunk(piece: string): void {
    const text = this.text;
    if (!text) return;
    if (!text.committed) {
      text.held += piece;
      if (text.held.length < TEXT_COMMIT_CHARS) return;
      // Large enough: this block is the payload. Its first character says whether it is JSON.
      text.committed = true;
      this.kind = "text";
      piece = text.held;
      text.held = "";
      const first = piece.trimStart()[0];
      text.json = first === "{" || first === "[";
      this.contentType = text.json ? JSON_TYPE : TEXT_TYPE;
    }
    this.emit(piece); // the indexer reads it, and feeds the schema builder while it is JSON
  }

  stringEnd(): void {
    const text = this.text;
    this.text = null;
    if (!text?.committed) return;
    if (!text.json || !this.indexer.complete()) this.contentType = TEXT_TYPE; // not JSON after all: stored as text
    this.finished = true;
  }

  /** The schema builder's events from a text block's JSON (the indexer tokenizes it); none for other text. */
  private textSchemaEvents(): JsonStreamHandler {
    const json = () => this.kind === "text" && this.text?.json === true;
    return {
      startObject: () => json() && this.builder.startObject(),
      endObject: () => json() && this.builder.endObject(),
      startArray: () => json() && this.builder.startArray(),
      endArray: () => json() && this.builder.endArray(),
      key: (name) => json() && this.builder.key(name),
      scalar: (type) => json() && this.builder.scalar(type),
    };
  }
}

/**
 * Reads a JSON-RPC answer from `body` and stores its payload under `id`. Resolves with
 * what the compact answer needs; rejects when the answer holds no single large payload.
 */
export async function offloadStream(
  body: ReadableStream<Uint8Array>,
  bucket: R2Bucket,
  id: string,
  metadataFor: (contentType: string) => PayloadMetadata,
  previewChars: number,
): Promise<StreamedPayload> {
  let capture: PayloadCapture | undefined;
  const uploader = new PartUploader(() => startPayloadUpload(bucket, id, metadataFor(capture!.contentType)));
  capture = new PayloadCapture(previewChars, uploader);
  const tokenizer = new JsonStreamTokenizer(capture);
  const reader = textSlices(body);
  let index: PayloadIndex | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      capture.setChunk(value);
      tokenizer.write(value);
      capture.endChunk();
      await uploader.flush();
    }
    tokenizer.end();
    if (!capture.finished)
      throw new Error(
        "the answer is larger than the gateway can hold and has no single large payload (structuredContent or a text block) to store",
      );
    await uploader.complete();
    index = capture.contentType === JSON_TYPE ? capture.indexer.end(uploader.size) : undefined;
    if (index) await putPayloadIndex(bucket, id, index);
  } catch (error) {
    await reader.cancel().catch(() => {});
    await uploader.abort();
    throw error;
  }
  const json = capture.contentType === JSON_TYPE;
  return {
    size: uploader.size,
    contentType: capture.contentType,
    preview: capture.preview,
    schema: json ? capture.builder.schema() : "string",
    structured: capture.sawStructured,
    array: index && largestIndexedArray(index),
    messageId: capture.messageId,
  };
}

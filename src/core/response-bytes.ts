/**
 * A JSON-RPC success response kept as the upstream's UTF-8 bytes, in the pieces they were
 * read in, never joined or decoded unless a layer reads the text: so that the relay can
 * hand a large answer no policy changes to the client at the runtime's pace (issue 38).
 * The bytes were checked as they came (core/response-check.ts): one JSON text `JSON.parse`
 * accepts, in well-formed UTF-8, exactly `{"jsonrpc":"2.0","id":…,"result":{…}}` with no
 * `resultType` at the result's top but `"complete"` (an `input_required` answer is read as
 * text by the eras), so what is passed on is exactly what decoding and encoding again
 * would have sent.
 * The splices the relay and the 2026-07-28 front make are made on the pieces, each a view.
 */
import type { JsonRpcId } from "./jsonrpc";
import { joinPieces } from "./pieces";
import { ResponseCheck, type ResponseLayout } from "./response-check";
import type { Span } from "./raw-json";

const encoder = new TextEncoder();
const COMPLETE = '"resultType":"complete"';

/** A plain success response as its pieces of bytes (see the header). */
export class ResponseBytes {
  private constructor(
    /** The bytes, in order; each a view the holder owns. */
    readonly pieces: readonly Uint8Array[],
    readonly byteLength: number,
    private readonly layout: ResponseLayout,
  ) {}

  /**
   * `pieces` as a plain success response, or undefined for anything else (an error, a
   * request, invalid JSON or UTF-8, an escaped member name at the top or in the result, an
   * id that is not a number or a string without escapes).
   *
   * @example
   * ResponseBytes.of([new TextEncoder().encode('{"result":{"content":[]},"jsonrpc":"2.0","id":3}')])?.id; // 3
   */
  static of(pieces: readonly Uint8Array[]): ResponseBytes | undefined {
    const check = new ResponseCheck();
    let length = 0;
    for (const piece of pieces) {
      check.push(piece);
      length += piece.byteLength;
    }
    const layout = check.end();
    return layout && new ResponseBytes(pieces, length, layout);
  }

  /** The response's id. */
  get id(): JsonRpcId {
    return JSON.parse(this.layout.idRaw) as JsonRpcId;
  }

  /** Whether the result says `"isError":true` (a tool error, whose message the audit event reads from the text). */
  get toolError(): boolean {
    return this.layout.toolError;
  }

  /** Whether the result says `"resultType":"complete"` already (a 2026-07-28 upstream's does). */
  get complete(): boolean {
    return this.layout.complete;
  }

  /** Whether the text has a line break (between tokens: an SSE event's data must then be written as text). */
  get lineBreaks(): boolean {
    return this.layout.lineBreaks;
  }

  /** Whether the result has a `structuredContent` that is not an object (a 2025 client cannot take it). */
  get structuredNotObject(): boolean {
    return this.layout.structuredNotObject;
  }

  /** The same response with the client's `id` in place of its own. */
  withId(id: JsonRpcId): ResponseBytes {
    const raw = JSON.stringify(id);
    return this.spliced(this.layout.id, encoder.encode(raw), { idRaw: raw });
  }

  /**
   * The same response with `member` (a member's raw JSON, `"name":value`) added at the end
   * of its result, as core/raw-json.ts `appendMemberSplice` adds one to text.
   */
  withResultMember(member: string): ResponseBytes {
    const close = this.layout.result.end - 1;
    const raw = encoder.encode(`${this.layout.resultEmpty ? "" : ","}${member}`);
    return this.spliced({ start: close, end: close }, raw, {
      resultEmpty: false,
      complete: this.layout.complete || member === COMPLETE,
    });
  }

  /** The bytes as one array (a copy, unless there is one piece). */
  joined(): Uint8Array {
    return joinPieces(this.pieces, this.byteLength);
  }

  /** The response with `span` replaced by `raw` (the pieces around it kept as views), its layout moved to match. */
  private spliced(span: Span, raw: Uint8Array, changed: Partial<ResponseLayout>): ResponseBytes {
    const pieces: Uint8Array[] = [];
    let at = 0;
    for (const piece of this.pieces) {
      const end = at + piece.byteLength;
      if (span.start > at) pieces.push(piece.subarray(0, Math.min(piece.byteLength, span.start - at)));
      if (span.start >= at && span.start < end) pieces.push(raw);
      else if (span.start === end && end === this.byteLength) pieces.push(raw);
      if (span.end < end) pieces.push(piece.subarray(Math.max(0, span.end - at)));
      at = end;
    }
    const shift = raw.byteLength - (span.end - span.start);
    const moved = (offset: number, end = false): number =>
      offset > span.start || (end && offset === span.end) ? offset + shift : offset;
    const { id, result } = this.layout;
    const layout: ResponseLayout = {
      ...this.layout,
      ...changed,
      id: { start: moved(id.start), end: moved(id.end, true) },
      result: { start: moved(result.start), end: moved(result.end, true) },
    };
    return new ResponseBytes(
      pieces.filter((piece) => piece.byteLength > 0),
      this.byteLength + shift,
      layout,
    );
  }
}

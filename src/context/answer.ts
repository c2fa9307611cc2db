/**
 * An answer to a client request as a value: its body (the text, or the upstream's bytes
 * not yet decoded) and what served it (the upstream and its side, whether the call was
 * bridged, the payload offload stored, whether it came as SSE). The relay makes it; each
 * layer gets it from `next` and passes it outward, reading the text only where it has a
 * policy for the call; the record layer copies what served it into the call record.
 */
import { piecesText } from "../core/pieces";
import type { ResponseBytes } from "../core/response-bytes";
import type { ResponseFlow } from "../core/response-flow";
import { utf8Length } from "../core/utf8-position";
import { GatewayError } from "../core/errors";
import { INTERNAL_ERROR } from "../core/jsonrpc";

/** What served an answer, as the layers that know it said. */
export type AnswerSource = {
  /** The upstream that answered (the last one asked, for routes that try several). */
  readonly upstream?: string;
  /** The upstream's side that served it: its 2025 (`legacy`) or 2026-07-28 (`modern`) one. */
  readonly side?: "legacy" | "modern";
  /** The Durable Object (its id) holding a 2025 upstream's call whose question this answer is (eras/call-bridge.ts). */
  readonly bridgedCall?: string;
  /** The id of the payload offload stored instead of the answer. */
  readonly payloadId?: string;
  /** True when the upstream answered with an SSE stream. */
  readonly sse?: boolean;
};

/**
 * A JSON-RPC response on its way to the client. The text is decoded from the bytes at
 * most once and shared by every layer that reads it; an answer nobody read keeps the
 * upstream's bytes, which the edge writes as they are.
 *
 * @example
 * const answer = await next(ctx, request);
 * if (!policy) return answer; // passed on unread
 * return answer.withText(reshaped(answer.text));
 */
export class Answer {
  #text: string | undefined;
  #bytes: ResponseBytes | undefined;
  #flow: ResponseFlow | undefined;
  /** The bytes' length, kept once they are dropped for the text (checked UTF-8 decodes to a text of that length). */
  readonly #byteLength: number | undefined;
  readonly from: AnswerSource;
  /** Answers made of bytes in this isolate, and how many of them had their text decoded (a test sees a relay that did not). */
  static readonly counts = { ofBytes: 0, decoded: 0, flows: 0 };

  private constructor(text: string | undefined, bytes: ResponseBytes | undefined, from: AnswerSource) {
    this.#text = text;
    this.#bytes = bytes;
    this.#byteLength = bytes?.byteLength;
    this.from = from;
  }

  /** An answer whose body is `text`. */
  static ofText(text: string, from: AnswerSource = {}): Answer {
    return new Answer(text, undefined, from);
  }

  /** An answer whose body is the upstream's bytes of a plain success response (kept as they are until someone reads the text). */
  static ofBytes(bytes: ResponseBytes, from: AnswerSource = {}): Answer {
    Answer.counts.ofBytes++;
    return new Answer(undefined, bytes, from);
  }

  /**
   * An answer that flows to the client as the upstream sends it (core/response-flow.ts):
   * made by the relay only for a call no layer reads the answer of (`CallContext.answerFlows`).
   * It has no text; its length and how it ended are known once it ended (`flow.ended`).
   */
  static ofFlow(flow: ResponseFlow, from: AnswerSource = {}): Answer {
    Answer.counts.flows++;
    const answer = new Answer(undefined, undefined, from);
    answer.#flow = flow;
    return answer;
  }

  /** The flow of an answer passed on as it arrives; undefined for any other. */
  get flow(): ResponseFlow | undefined {
    return this.#flow;
  }

  /** The body's text, decoded once. */
  get text(): string {
    if (this.#flow) {
      // A layer that reads it should have said so before the call (`readingAnswer`): the call fails, the flow stops.
      // The gateway's own error (never the upstream's failure: its health is not charged for it).
      const error = new GatewayError(
        500,
        INTERNAL_ERROR,
        "an answer flowing to the client has no text: a layer that reads it must say so first",
      );
      this.#flow.cancel(error);
      throw error;
    }
    if (this.#text === undefined) {
      Answer.counts.decoded++;
      this.#text = piecesText(this.#bytes!.pieces);
      // The text is what every layer reads and writes from now on: the bytes are not held beside it.
      this.#bytes = undefined;
    }
    return this.#text;
  }

  /** The upstream's bytes while no layer has read the text of an answer made of them. */
  get held(): ResponseBytes | undefined {
    return this.#text === undefined ? this.#bytes : undefined;
  }

  /** True while no layer has read the text of an answer made of bytes (the edge may write them as they are). */
  get unread(): boolean {
    return this.#text === undefined;
  }

  /** What the edge writes: the upstream's bytes while no layer read the text (or their flow), else the text. */
  get body(): string | ResponseBytes | ResponseFlow {
    return this.#flow ?? (this.#text === undefined ? this.#bytes! : this.#text);
  }

  /** The body's length in UTF-8 bytes, without decoding it (0 for a flow: its length is known once it ended). */
  get byteLength(): number {
    if (this.#flow) return 0;
    return this.#byteLength ?? utf8Length(this.#text!);
  }

  /** The same answer (what served it) with a body a layer changed (a flow it replaces is stopped). */
  withText(text: string): Answer {
    if (text === this.#text) return this;
    this.#flow?.cancel(new GatewayError(500, INTERNAL_ERROR, "the answer was replaced"));
    return new Answer(text, undefined, this.from);
  }

  /** The same answer with its text changed by `change` (the text is read for it). */
  map(change: (text: string) => string): Answer {
    return this.withText(change(this.text));
  }

  /** The same body with more said about what served it. */
  with(from: AnswerSource): Answer {
    const answer = new Answer(this.#text, this.#bytes, { ...this.from, ...from });
    answer.#flow = this.#flow;
    return answer;
  }
}

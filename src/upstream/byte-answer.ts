/**
 * A large upstream answer kept as its bytes (issue 38): a JSON body of at least
 * PASS_THROUGH_MIN_BYTES that is exactly one success response (core/response-bytes.ts)
 * becomes a `ByteWire`, whose text and parsed message are made only if someone asks for
 * them. The relay turns it into an `Answer` made of the bytes (relay/forward.ts), which
 * the front writes as they are when no layer read it.
 */
import type { JsonRpcId, JsonRpcMessage, WireMessage } from "../core/jsonrpc";
import { responseHead } from "../core/response-bytes";
import { validateMessage } from "../core/validate-message";

/**
 * The smallest JSON answer kept as bytes: below it, decoding and parsing cost less than a
 * check of every byte would save (the common small answer stays on the text path).
 */
export const PASS_THROUGH_MIN_BYTES = 256 * 1024;

const decoder = new TextDecoder();

/** One success response as the upstream's bytes, its text decoded and its message parsed only when read. */
export class ByteWire implements WireMessage {
  #text: string | undefined;
  #message: JsonRpcMessage | undefined;

  constructor(
    readonly bytes: Uint8Array,
    /** The response's id, read from the bytes. */
    readonly id: JsonRpcId,
  ) {}

  get text(): string {
    this.#text ??= decoder.decode(this.bytes);
    return this.#text;
  }

  get message(): JsonRpcMessage {
    this.#message ??= validateMessage(JSON.parse(this.text));
    return this.#message;
  }
}

/** `bytes` as a `ByteWire` when large enough and a plain success response; undefined to read it as text. */
export function byteWireOf(bytes: Uint8Array): ByteWire | undefined {
  if (bytes.byteLength < PASS_THROUGH_MIN_BYTES) return undefined;
  const head = responseHead(bytes);
  return head && new ByteWire(bytes, head.id);
}

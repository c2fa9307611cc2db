/**
 * A large upstream answer kept as its bytes (issue 38): a JSON body of at least
 * PASS_THROUGH_MIN_BYTES that is exactly one success response (core/response-bytes.ts)
 * becomes a `ByteWire`, whose text and parsed message are made only if someone asks for
 * them. The relay turns it into an `Answer` made of the bytes (relay/forward.ts), which
 * the front writes as they are when no layer read it.
 */
import type { JsonRpcId, JsonRpcMessage, WireMessage } from "../core/jsonrpc";
import { piecesText } from "../core/pieces";
import { ResponseBytes } from "../core/response-bytes";
import type { ResponseFlow } from "../core/response-flow";
import { validateMessage } from "../core/validate-message";

/**
 * The smallest JSON answer kept as bytes: below it, decoding and parsing cost less than a
 * check of every byte would save (the common small answer stays on the text path).
 */
export const PASS_THROUGH_MIN_BYTES = 256 * 1024;

/** One success response as the upstream's bytes, its text decoded and its message parsed only when read. */
export class ByteWire implements WireMessage {
  #text: string | undefined;
  #message: JsonRpcMessage | undefined;

  constructor(readonly bytes: ResponseBytes) {}

  /** The response's id, read from the bytes. */
  get id(): JsonRpcId {
    return this.bytes.id;
  }

  get text(): string {
    this.#text ??= piecesText(this.bytes.pieces);
    return this.#text;
  }

  get message(): JsonRpcMessage {
    this.#message ??= validateMessage(JSON.parse(this.text));
    return this.#message;
  }
}

/** `pieces` (`length` bytes in all) as a `ByteWire` when large enough and a plain success response; undefined to read it as text. */
export function byteWireOf(pieces: readonly Uint8Array[], length: number): ByteWire | undefined {
  if (length < PASS_THROUGH_MIN_BYTES) return undefined;
  const bytes = ResponseBytes.of(pieces);
  return bytes && new ByteWire(bytes);
}

/**
 * A large success response flowing to the client as it arrives (core/response-flow.ts): the
 * relay hands it on as the answer to the request it was started for; nothing reads it.
 */
export class FlowWire implements WireMessage {
  constructor(readonly flow: ResponseFlow) {}

  get text(): string {
    throw new Error("a flowing answer has no text: nothing may read it");
  }

  get message(): JsonRpcMessage {
    throw new Error("a flowing answer has no message: nothing may read it");
  }
}

/** True for a message kept as bytes or flowing (its text is read by no one on the way). */
export function unreadWire(wire: WireMessage): wire is ByteWire | FlowWire {
  return wire instanceof ByteWire || wire instanceof FlowWire;
}

/**
 * Chooses the shape of the answer to a POST as the handlers run: plain JSON when the
 * answers come before anything else, an SSE stream as soon as a message must reach the
 * client ahead of its answer (progress, a log line, a sampling request the upstream is
 * waiting on). Messages go at the client's pace: a handler's `emit` resolves once the
 * client's stream has taken the message before it, so a client that stops reading holds
 * the upstream back instead of the gateway buffering for it.
 */
import { errorResponse, errorTextOf, GatewayError } from "../../core/errors";
import type { JsonRpcId, OutgoingMessage } from "../../core/jsonrpc";
import { SSE_HEADERS } from "../../core/sse";
import { piecesStream } from "../../core/pieces";
import type { ResponseBytes } from "../../core/response-bytes";
import { ResponseFlow } from "../../core/response-flow";
import { SseWriter } from "./sse-writer";

/** How often a stream of server messages (the GET stream, server-stream.ts) sends a keepalive comment. */
export const SSE_KEEPALIVE_INTERVAL_MS = 15_000;

/** A job's answer: its text, the upstream's bytes of it, or their flow (`Answer.body`). */
type Body = string | ResponseBytes | ResponseFlow;

/**
 * A job's answer, or a message ahead of it;
 * `framed` is called once its bytes are no longer needed (an upstream's bytes are valid until then).
 */
type ReplyEvent =
  | { readonly final: true; readonly text: Body; readonly id: JsonRpcId }
  | { readonly final: false; readonly message: OutgoingMessage; readonly framed: () => void };

/**
 * A single-consumer queue whose reader waits for the next push, and whose writers can
 * wait until what they pushed has been taken: so a producer runs at the consumer's pace.
 */
export class MessageQueue<T> {
  private readonly items: { readonly item: T; readonly taken: () => void }[] = [];
  private waiter: ((item: T) => void) | undefined;
  private closed = false;

  /** Adds `item`; resolves once the consumer has taken it (at once after `close`). */
  push(item: T): Promise<void> {
    if (this.closed) return Promise.resolve();
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter(item);
      return Promise.resolve();
    }
    return new Promise((taken) => this.items.push({ item, taken }));
  }

  next(): Promise<T> {
    const entry = this.items.shift();
    if (entry !== undefined) {
      entry.taken();
      return Promise.resolve(entry.item);
    }
    return new Promise((resolve) => (this.waiter = resolve));
  }

  /** The consumer is gone: what is queued is dropped and no producer waits any longer. */
  close(): void {
    this.closed = true;
    for (const entry of this.items.splice(0)) entry.taken();
  }
}

/** Sends a message ahead of the answer; resolves once the client has taken the one before and this one's bytes are copied. */
export type Emit = (message: OutgoingMessage) => Promise<void>;

/** `streamed` asks for an SSE answer even if no message goes ahead of the response. */
export type ReplyJob = {
  readonly id: JsonRpcId;
  readonly run: (emit: Emit, streamed: () => void) => Promise<Body>;
};

const decoder = new TextDecoder();

/** An answer's body as text (for a batch's array, whose answers never flow: the front does not let them). */
function textOf(body: Body): string {
  if (body instanceof ResponseFlow) throw new Error("a batch's answer cannot flow");
  return typeof body === "string" ? body : decoder.decode(body.joined());
}

/** An answer's body as one SSE event's data: bytes go as they are when on one line (JSON may have line breaks between tokens). */
function eventBody(body: Body): string | ResponseBytes | ResponseFlow {
  return typeof body === "string" || body instanceof ResponseFlow || !body.lineBreaks ? body : textOf(body);
}

/** A job's answer written as its body: text, the pieces of bytes, or a flow (core/response-flow.ts). */
function bodyOf(body: Body): BodyInit {
  if (typeof body === "string") return body;
  return body instanceof ResponseFlow ? body.stream() : piecesStream(body.pieces);
}

/**
 * Runs the handlers of one POST and answers with their responses. `batch` answers with
 * a JSON array (2025-03-26 batches) when no message had to go first. A handler whose
 * upstream chose SSE (and called `streamed`) gets an SSE answer even so. An SSE answer is
 * written by an `SseWriter`: a message's bytes are copied into its buffer before the
 * handler's `emit` resolves, and the next message is taken once the client has the last.
 */
export async function replyTo(jobs: readonly ReplyJob[], batch: boolean, onCancel: () => void): Promise<Response> {
  const queue = new MessageQueue<ReplyEvent>();
  /** The client no longer reads: messages are dropped, their handlers not held. */
  let gone = false;
  const emit: Emit = (message) =>
    new Promise<void>((framed) => {
      void queue.push({ final: false, message, framed }).then(() => gone && framed());
    });
  const failures = new Map<number, unknown>();
  let sse = false;
  const streamed = () => {
    sse = true;
  };
  jobs.forEach((job, index) =>
    job.run(emit, streamed).then(
      (text) => void queue.push({ final: true, text, id: job.id }),
      (error: unknown) => {
        failures.set(index, error);
        void queue.push({ final: true, text: errorTextOf(error, job.id), id: job.id });
      },
    ),
  );

  const finals: Extract<ReplyEvent, { final: true }>[] = [];
  let first: ReplyEvent | undefined;
  while (finals.length < jobs.length) {
    const event = await queue.next();
    if (!event.final) {
      first = event;
      break;
    }
    finals.push(event);
  }
  if (!first) {
    if (!batch) {
      const failure = failures.get(0);
      // A request-level failure with its own HTTP status (a 5xx from a bug) keeps it.
      if (failures.size === 1 && !(failure instanceof GatewayError && failure.status === 200))
        return errorResponse(failure, jobs[0]!.id);
    }
    if (!sse) {
      // An answer kept as bytes goes out in the pieces it came in (core/pieces.ts), a flow as it comes: cut short where it breaks off.
      const body = batch ? `[${finals.map((final) => textOf(final.text)).join(",")}]` : bodyOf(finals[0]!.text);
      return new Response(body, { headers: { "content-type": "application/json" } });
    }
  }

  const writer = new SseWriter(() => {
    gone = true;
    queue.close();
    onCancel();
  });
  const write = async (event: ReplyEvent) =>
    event.final ? writer.answer(eventBody(event.text), event.id) : writer.message(event.message, event.framed);
  void (async () => {
    let written = finals.length;
    try {
      for (const final of finals) await write(final);
      if (first) await write(first);
      while (written < jobs.length) {
        const event = await queue.next();
        await write(event);
        if (event.final) written++;
      }
      await writer.close();
    } catch {
      // The client went away (the writer said so), or the stream broke: nothing more to write.
      writer.abandon();
    }
  })();
  return new Response(writer.body, { headers: SSE_HEADERS });
}

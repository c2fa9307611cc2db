/**
 * Chooses the shape of the answer to a POST as the handlers run: plain JSON when the
 * answers come before anything else, an SSE stream as soon as a message must reach the
 * client ahead of its answer (progress, a log line, a sampling request the upstream is
 * waiting on). Nothing is buffered once streaming has begun.
 */
import { errorResponse, GatewayError } from "../core/errors";
import { errorText, INTERNAL_ERROR, type JsonRpcId } from "../core/jsonrpc";
import { SSE_HEADERS, SSE_KEEPALIVE, sseFrame } from "../core/sse";

export const SSE_KEEPALIVE_INTERVAL_MS = 15_000;

type ReplyEvent = { readonly final: boolean; readonly text: string };

/** A single-consumer queue whose reader waits for the next push. */
export class MessageQueue<T> {
  private readonly items: T[] = [];
  private waiter: ((item: T) => void) | undefined;

  push(item: T): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter(item);
    } else this.items.push(item);
  }

  next(): Promise<T> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => (this.waiter = resolve));
  }
}

function errorAsText(error: unknown, id: JsonRpcId): string {
  if (error instanceof GatewayError) return errorText(error.id ?? id, error.code, error.message, error.data);
  console.error("mcp-edge-gateway: unexpected error", error);
  return errorText(id, INTERNAL_ERROR, "Internal error in the gateway; the operator's logs have the details");
}

export type ReplyJob = { readonly id: JsonRpcId; readonly run: (emit: (text: string) => void) => Promise<string> };

/**
 * Runs the handlers of one POST and answers with their responses. `batch` answers with
 * a JSON array (2025-03-26 batches) when no message had to go first.
 */
export async function replyTo(jobs: readonly ReplyJob[], batch: boolean, onCancel: () => void): Promise<Response> {
  const queue = new MessageQueue<ReplyEvent>();
  const emit = (text: string) => queue.push({ final: false, text });
  const failures = new Map<number, unknown>();
  jobs.forEach((job, index) =>
    job.run(emit).then(
      (text) => queue.push({ final: true, text }),
      (error: unknown) => {
        failures.set(index, error);
        queue.push({ final: true, text: errorAsText(error, job.id) });
      },
    ),
  );

  const finals: string[] = [];
  let first: ReplyEvent | undefined;
  while (finals.length < jobs.length) {
    const event = await queue.next();
    if (!event.final) {
      first = event;
      break;
    }
    finals.push(event.text);
  }
  if (!first) {
    if (!batch) {
      const failure = failures.get(0);
      // A request-level failure with its own HTTP status (a 5xx from a bug) keeps it.
      if (failures.size === 1 && !(failure instanceof GatewayError && failure.status === 200)) return errorResponse(failure, jobs[0]!.id);
      return new Response(finals[0], { headers: { "content-type": "application/json" } });
    }
    return new Response(`[${finals.join(",")}]`, { headers: { "content-type": "application/json" } });
  }

  let written = finals.length;
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const text of finals) controller.enqueue(sseFrame(text));
      controller.enqueue(sseFrame(first.text));
      timer = setInterval(() => controller.enqueue(SSE_KEEPALIVE), SSE_KEEPALIVE_INTERVAL_MS);
    },
    async pull(controller) {
      if (written === jobs.length) {
        if (timer !== undefined) clearInterval(timer);
        controller.close();
        return;
      }
      const event = await queue.next();
      controller.enqueue(sseFrame(event.text));
      if (event.final) written++;
      if (written === jobs.length) {
        if (timer !== undefined) clearInterval(timer);
        controller.close();
      }
    },
    cancel() {
      if (timer !== undefined) clearInterval(timer);
      onCancel();
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}

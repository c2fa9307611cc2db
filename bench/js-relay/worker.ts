/**
 * The floor for a relay that reads what it relays: forwards each request like the
 * pass-through (bench/passthrough/) and copies the answer's body to the client one chunk
 * at a time from JavaScript, written only as fast as the client takes it, and nothing
 * else: no parsing, no copies. The gateway has to see
 * every byte (SSE framing, ids, sizes), so what this Worker costs workerd at a given pace
 * is what any Worker doing that costs, and bench:slow-client sets the gateway beside it.
 * Not part of the gateway; never deployed.
 */
import type { ExecutionContext } from "@cloudflare/workers-types";
import { forwardTo, type PassthroughEnv } from "../passthrough/worker.ts";

/**
 * The same answer, its body copied chunk by chunk by JavaScript: each chunk read is written
 * once the client has taken the one before (`writer.ready`), so memory follows its pace.
 */
export function copiedByJavaScript(answer: Response, ctx: ExecutionContext): Response {
  if (!answer.body) return answer;
  const reader = answer.body.getReader();
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const copy = async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await writer.ready;
        await writer.write(value);
      }
      await writer.close();
    } catch (error) {
      await Promise.allSettled([reader.cancel(error), writer.abort(error)]);
    }
  };
  ctx.waitUntil(copy());
  return new Response(readable, { status: answer.status, headers: answer.headers });
}

// wrangler needs the module's default export to be the handler.
export default {
  async fetch(request: Request, env: PassthroughEnv, ctx: ExecutionContext): Promise<Response> {
    if (!env.TARGET) return new Response("js-relay: set the TARGET var (--var TARGET:<url>)\n", { status: 500 });
    return copiedByJavaScript(await forwardTo(request, env.TARGET), ctx);
  },
};

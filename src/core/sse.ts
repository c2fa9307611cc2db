/**
 * Server-Sent Events, both ways: reading an upstream's `text/event-stream` as it
 * arrives, and framing messages for the client.
 *
 * Framing keeps bytes: a data payload with line breaks is written as several `data:`
 * lines, which a reader joins back with "\n" into the same text.
 */

/** One event; `id` and `retry` are the stream's values in force when it was dispatched. */
export type SseEvent = { readonly event: string; readonly data: string; readonly id?: string; readonly retry?: number };

/**
 * Yields each event of an SSE body as soon as its terminating blank line arrives.
 * Events without data (a "priming" event that only sets `id` and `retry`) are yielded
 * too, with empty `data`, so a reader can resume from their id.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data: string[] = [];
  let event = "";
  let id: string | undefined;
  let retry: number | undefined;
  let fields = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let newline: number;
      while ((newline = nextLineBreak(buffer)) >= 0) {
        let line = buffer.slice(0, newline);
        buffer = buffer.slice(buffer.charCodeAt(newline) === 0x0d && buffer.charCodeAt(newline + 1) === 0x0a ? newline + 2 : newline + 1);
        if (line === "") {
          if (fields > 0) yield { event: event || "message", data: data.join("\n"), ...(id !== undefined ? { id } : {}), ...(retry !== undefined ? { retry } : {}) };
          data = [];
          event = "";
          fields = 0;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        line = colon < 0 ? "" : line.slice(colon + 1);
        if (line.startsWith(" ")) line = line.slice(1);
        fields++;
        if (field === "data") data.push(line);
        else if (field === "event") event = line;
        else if (field === "id") id = line;
        else if (field === "retry" && /^\d+$/.test(line)) retry = Number(line);
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function nextLineBreak(buffer: string): number {
  const lf = buffer.indexOf("\n");
  const cr = buffer.indexOf("\r");
  if (cr < 0) return lf;
  // A lone trailing CR may be the first half of CRLF still in flight.
  if (cr === buffer.length - 1) return lf;
  return lf < 0 ? cr : Math.min(lf, cr);
}

const encoder = new TextEncoder();

/** One `message` event carrying a JSON-RPC message's text. */
export function sseFrame(text: string, id?: string): Uint8Array {
  const idLine = id === undefined ? "" : `id: ${id}\n`;
  const dataLines = text.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join("");
  return encoder.encode(`event: message\n${idLine}${dataLines}\n`);
}

/** A comment line; keeps intermediaries from closing an idle stream. */
export const SSE_KEEPALIVE = encoder.encode(": keepalive\n\n");

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

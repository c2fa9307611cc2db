/**
 * Server-Sent Events, both ways: reading an upstream's `text/event-stream` as it
 * arrives, and framing messages for the client.
 *
 * Framing keeps bytes: a data payload with line breaks is written as several `data:`
 * lines, which a reader joins back with "\n" into the same text.
 */

/**
 * One event; `id` and `retry` are the stream's values in force when it was dispatched.
 * An event whose data is too long to hold comes with `large`: its data as a byte stream
 * (and `data` empty), read from the same connection. The next event is read after that
 * stream is finished.
 */
export type SseEvent = { readonly event: string; readonly data: string; readonly id?: string; readonly retry?: number; readonly large?: ReadableStream<Uint8Array> };

/**
 * Yields each event of an SSE body as soon as its terminating blank line arrives.
 * Events without data (a "priming" event that only sets `id` and `retry`) are yielded
 * too, with empty `data`, so a reader can resume from their id. A data line longer than
 * `largeChars` is not collected: the event is yielded with `large` as soon as that is known.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, largeChars = Number.POSITIVE_INFINITY): AsyncGenerator<SseEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const state = { buffer: "", ended: false };
  const more = async (): Promise<boolean> => {
    const { value, done } = await reader.read();
    if (done) state.ended = true;
    else state.buffer += value;
    return !done;
  };
  let data: string[] = [];
  let dataChars = 0;
  let event = "";
  let id: string | undefined;
  let retry: number | undefined;
  let fields = 0;
  const reset = () => {
    data = [];
    dataChars = 0;
    event = "";
    fields = 0;
  };
  try {
    for (;;) {
      let newline: number;
      while ((newline = nextLineBreak(state.buffer)) >= 0) {
        let line = state.buffer.slice(0, newline);
        state.buffer = state.buffer.slice(lineBreakEnd(state.buffer, newline));
        if (line === "") {
          if (fields > 0) yield { event: event || "message", data: data.join("\n"), ...(id !== undefined ? { id } : {}), ...(retry !== undefined ? { retry } : {}) };
          reset();
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        line = colon < 0 ? "" : line.slice(colon + 1);
        if (line.startsWith(" ")) line = line.slice(1);
        fields++;
        if (field === "data") {
          data.push(line);
          dataChars += line.length;
        } else if (field === "event") event = line;
        else if (field === "id") id = line;
        else if (field === "retry" && /^\d+$/.test(line)) retry = Number(line);
      }
      if (state.buffer.startsWith("data:") && state.buffer.length + dataChars > largeChars) {
        const done = { finished: false, cancelled: false };
        const large = largeDataStream(state, more, data, done);
        yield { event: event || "message", data: "", large, ...(id !== undefined ? { id } : {}), ...(retry !== undefined ? { retry } : {}) };
        if (!done.finished) return; // the consumer gave up on it: the connection is no use now
        reset();
        continue;
      }
      if (state.ended || !(await more())) break;
    }
  } finally {
    if (state.ended) reader.releaseLock();
    else await reader.cancel().catch(() => {});
  }
}

function lineBreakEnd(buffer: string, at: number): number {
  return buffer.charCodeAt(at) === 0x0d && buffer.charCodeAt(at + 1) === 0x0a ? at + 2 : at + 1;
}

/**
 * The data of the event being read, as bytes, from the data lines already read (`before`)
 * through the line in progress to the event's end: further `data:` lines are joined
 * with "\n" as a reader would, other fields are skipped, a blank line ends it.
 */
function largeDataStream(
  state: { buffer: string; ended: boolean },
  more: () => Promise<boolean>,
  before: readonly string[],
  done: { finished: boolean; cancelled: boolean },
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let inData = true; // inside a data line (else between lines)
  let head = before.map((line) => `${line}\n`).join("");
  state.buffer = state.buffer.slice(state.buffer.startsWith("data: ") ? 6 : 5);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (inData) {
          const newline = nextLineBreak(state.buffer);
          if (newline >= 0) {
            const text = head + state.buffer.slice(0, newline);
            head = "";
            state.buffer = state.buffer.slice(lineBreakEnd(state.buffer, newline));
            inData = false;
            if (text !== "") return controller.enqueue(encoder.encode(text));
            continue;
          }
          // Keep a lone trailing CR: it may be half of a CRLF.
          const keep = state.buffer.endsWith("\r") ? 1 : 0;
          const text = head + state.buffer.slice(0, state.buffer.length - keep);
          head = "";
          state.buffer = state.buffer.slice(state.buffer.length - keep);
          if (text !== "") return controller.enqueue(encoder.encode(text));
        } else {
          const newline = nextLineBreak(state.buffer);
          if (newline >= 0) {
            const line = state.buffer.slice(0, newline);
            if (line === "") {
              state.buffer = state.buffer.slice(lineBreakEnd(state.buffer, newline));
              done.finished = true;
              return controller.close();
            }
            if (line.startsWith("data:")) {
              state.buffer = state.buffer.slice(line.startsWith("data: ") ? 6 : 5);
              inData = true;
              head = "\n";
              continue;
            }
            state.buffer = state.buffer.slice(lineBreakEnd(state.buffer, newline)); // another field: not data
            continue;
          }
          if (state.buffer.length > 5 && state.buffer.startsWith("data:")) {
            state.buffer = state.buffer.slice(state.buffer.startsWith("data: ") ? 6 : 5);
            inData = true;
            head = "\n";
            continue;
          }
        }
        if (state.ended || !(await more())) {
          // The body ended inside the event: what was read is all there is.
          done.finished = true;
          if (head !== "") controller.enqueue(encoder.encode(head));
          return controller.close();
        }
      }
    },
    cancel() {
      done.cancelled = true;
    },
  });
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

/**
 * JSON texts one after another in one byte stream: a single JSON body, several bodies
 * written back to back, or newline-delimited JSON (NDJSON). A 2026-07-28 server may answer
 * a call or a `subscriptions/listen` over `application/json` with one message per line,
 * and a listen's body never ends: each message must be handed on as soon as it is whole.
 *
 * Each text is found by one pass over its characters (string and escape state, bracket
 * depth; inside strings by searching for the next quote or backslash), so the work is
 * linear in the body; only the text in progress is held, and one
 * longer than its bound ends the read.
 */
import { CLOSE_ARRAY, CLOSE_OBJECT, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-chars";

/** Why a stream could not be split: a text longer than the bound, or something that is not a JSON object or array. */
export class JsonValuesError extends Error {
  override readonly name = "JsonValuesError";
  /** "too-large" past the bound; "not-json" for text outside an object or array (its start in `text`). */
  readonly reason: "too-large" | "not-json";
  readonly text: string;

  constructor(reason: "too-large" | "not-json", message: string, text = "") {
    super(message);
    this.reason = reason;
    this.text = text;
  }
}

/** How much of unreadable text is kept for the log. */
const SHOWN_CHARS = 300;

/** Where `search` next occurs in `text` from `from`, or `text.length`. */
function indexOrEnd(text: string, search: string, from: number): number {
  const at = text.indexOf(search, from);
  return at === -1 ? text.length : at;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/**
 * Splits `body` into the texts of its top-level JSON objects and arrays, in order, each
 * exactly as it was written. Whitespace (newlines included) between them is skipped;
 * anything else there is a `not-json` error, a text of more than `maxChars` characters a
 * `too-large` one (thrown when the bound is passed, before the rest is read).
 *
 * @example
 * for await (const text of jsonValues(response.body!, 1024 * 1024)) console.log(JSON.parse(text));
 */
export async function* jsonValues(body: ReadableStream<Uint8Array>, maxChars: number): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let held = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      const chunk = done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = depth > 0 ? 0 : -1;
      let nextBackslash = -1;
      let nextQuote = -1;
      for (let i = 0; i < chunk.length; i++) {
        const code = chunk.charCodeAt(i);
        if (depth === 0) {
          if (isSpace(code)) continue;
          if (code !== OPEN_OBJECT && code !== OPEN_ARRAY)
            throw new JsonValuesError(
              "not-json",
              "text outside a JSON object or array",
              chunk.slice(i, i + SHOWN_CHARS),
            );
          start = i;
          depth = 1;
          continue;
        }
        if (inString) {
          if (escaped) {
            escaped = false;
            continue;
          }
          // Inside a string only its closing quote and escapes matter: jump to the nearer.
          // Each is found by a forward search kept until passed, so no text is searched twice.
          if (nextBackslash < i) nextBackslash = indexOrEnd(chunk, "\\", i);
          if (nextQuote < i) nextQuote = indexOrEnd(chunk, '"', i);
          const quote = nextQuote;
          if (nextBackslash < quote) {
            i = nextBackslash;
            escaped = true;
          } else if (quote === chunk.length) i = chunk.length;
          else {
            i = quote;
            inString = false;
          }
          continue;
        }
        if (code === QUOTE) inString = true;
        else if (code === OPEN_OBJECT || code === OPEN_ARRAY) depth++;
        else if ((code === CLOSE_OBJECT || code === CLOSE_ARRAY) && --depth === 0) {
          const last = chunk.slice(start, i + 1);
          if (held + last.length > maxChars)
            throw new JsonValuesError("too-large", `a JSON text longer than ${maxChars} characters`);
          parts.push(last);
          const text = parts.join("");
          parts.length = 0;
          held = 0;
          start = -1;
          yield text;
        }
      }
      if (depth > 0 && start >= 0) {
        const rest = chunk.slice(start);
        held += rest.length;
        if (held > maxChars) throw new JsonValuesError("too-large", `a JSON text longer than ${maxChars} characters`);
        parts.push(rest);
      }
      if (done) break;
    }
    if (depth > 0)
      throw new JsonValuesError("not-json", "the body ended inside a JSON text", parts.join("").slice(0, SHOWN_CHARS));
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

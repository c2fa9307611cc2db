/**
 * Splitting a byte stream into its JSON texts (core/json-values.ts): one body, bodies back
 * to back, newline-delimited JSON, split anywhere between chunks; bounded per text.
 */
import { describe, expect, it } from "vitest";
import { jsonValues, JsonValuesError } from "../../src/core/json-values";

function streamOf(chunks: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function split(chunks: readonly string[], maxChars = 1_000): Promise<string[]> {
  const found: string[] = [];
  for await (const text of jsonValues(streamOf(chunks), maxChars)) found.push(text);
  return found;
}

/** Every way of cutting `text` in two between characters (a cut inside a UTF-8 sequence is tested on bytes below). */
function cuts(text: string): string[][] {
  const characters = Array.from(text);
  return characters.map((_, at) => [characters.slice(0, at).join(""), characters.slice(at).join("")]);
}

describe("jsonValues", () => {
  const A = '{"jsonrpc":"2.0","method":"a","params":{"s":"} ] { [ \\" \\\\"}}';
  const B = '[{"id":1,"result":{"x":"é€😀"}}]';

  it.each([
    ["one body", [A], [A]],
    ["newline-delimited", [`${A}\n${B}\n`], [A, B]],
    ["CRLF and blank lines between", [`\r\n${A}\r\n\r\n${B}`], [A, B]],
    ["back to back", [`${A}${B}`], [A, B]],
    ["pretty-printed over lines", ['{\n  "a": [\n 1,\n 2\n ]\n}\n'], ['{\n  "a": [\n 1,\n 2\n ]\n}']],
    ["nothing", [""], []],
    [
      "a string of escapes, quotes escaped among them",
      [`{"s":"${'\\n\\"'.repeat(200)}"}\n[1]`],
      [`{"s":"${'\\n\\"'.repeat(200)}"}`, "[1]"],
    ],
  ])("%s", async (_name, chunks, expected) => {
    expect(await split(chunks)).toEqual(expected);
  });

  it("finds the same texts wherever the chunks are cut (inside strings, escapes, multi-byte characters)", async () => {
    const whole = `${A}\n${B}\n`;
    for (const pieces of cuts(whole)) expect(await split(pieces)).toEqual([A, B]);
    // A cut inside a UTF-8 sequence: bytes, not characters.
    const bytes = new TextEncoder().encode(B);
    for (let at = 0; at <= bytes.length; at++) {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, at));
          controller.enqueue(bytes.slice(at));
          controller.close();
        },
      });
      const found: string[] = [];
      for await (const text of jsonValues(stream, 1_000)) found.push(text);
      expect(found).toEqual([B]);
    }
  });

  it.each([
    ["text outside an object or array", ["hello"], "not-json"],
    ["a scalar", ["42\n"], "not-json"],
    ["a body cut inside a text", ['{"a":'], "not-json"],
    ["a text past the bound, found before it ends", ['{"a":"', "x".repeat(200), '"}'], "too-large"],
  ])("refuses %s", async (_name, chunks, reason) => {
    const error = await split(chunks, 100).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JsonValuesError);
    expect((error as JsonValuesError).reason).toBe(reason);
  });

  it("hands each text on as soon as it is whole, with the stream still open", async () => {
    let more!: (chunk: string) => void;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        more = (chunk) => controller.enqueue(new TextEncoder().encode(chunk));
        more(`${A}\n`);
      },
    });
    const texts = jsonValues(stream, 1_000);
    expect((await texts.next()).value).toBe(A);
    more(B);
    expect((await texts.next()).value).toBe(B);
    await texts.return(undefined);
  });
});

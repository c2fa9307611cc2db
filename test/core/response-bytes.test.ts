/**
 * core/response-bytes.ts: which upstream answers may be passed on as their bytes (exactly
 * one plain success response, checked as its pieces come), and the splices the relay and
 * the 2026-07-28 front make in its pieces, which must equal what the text path makes
 * however the bytes were cut.
 */
import { describe, expect, it } from "vitest";
import { ResponseBytes } from "../../src/core/response-bytes";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string) => encoder.encode(text);
const of = (text: string) => ResponseBytes.of([bytes(text)]);
const textOf = (response: ResponseBytes) => decoder.decode(response.joined());
/** `text`'s bytes cut into pieces of `size`. */
const cut = (text: string, size: number) => {
  const all = bytes(text);
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < all.length; at += size) pieces.push(all.subarray(at, at + size));
  return pieces;
};

describe("ResponseBytes.of", () => {
  it.each([
    ['{"result":{"content":[]},"jsonrpc":"2.0","id":3}', 3],
    ['{"jsonrpc":"2.0","id":"gw-req-ab","result":{}}', "gw-req-ab"],
    [' {\n"jsonrpc" : "2.0" ,"id":-1.5e2,"result":{"a":[1,{"b":null}]}}\n', -150],
  ])("reads the id of %s", (text, id) => {
    expect(of(text)?.id).toEqual(id);
  });

  it.each([
    ['{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}', "an error"],
    ['{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}', "a result with a resultType"],
    ['{"jsonrpc":"2.0","id":1,"id":2,"result":{}}', "a duplicate id"],
    ['{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}', "a duplicate jsonrpc"],
    ['{"jsonrpc":"2.0","id":1,"result":{},"result":{}}', "a duplicate result"],
    ['{"jsonrpc":"2.0","id":1,"result":{},"extra":1}', "another member"],
    ['{"jsonrpc":"2.0","id":"a\\u0062","result":{}}', "an escaped id"],
    ['{"jsonrpc":"2.0","id":null,"result":{}}', "a null id"],
    ['{"jsonrpc":"1.0","id":1,"result":{}}', "another version"],
    ['{"jsonrpc":"2.0","id":1,"result":[]}', "a result that is not an object"],
    ['{"jsonrpc":"2.0","id":1,"result":{"a":1,}}', "invalid JSON"],
    ['{"jsonrpc":"2.0","id":1,"result":{}} {}', "two values"],
    ['{"jsonrpc":"2.0","id":1,"res\\u0075lt":{}}', "an escaped member name"],
  ])("refuses %s (%s)", (text) => {
    expect(of(text)).toBeUndefined();
  });

  it("refuses bytes that are not well-formed UTF-8 (decoding would change them)", () => {
    const text = bytes('{"jsonrpc":"2.0","id":1,"result":{"t":"ab"}}');
    text[text.indexOf(0x61)] = 0xff;
    expect(ResponseBytes.of([text])).toBeUndefined();
  });
});

describe("splices in an accepted response's pieces", () => {
  it("puts the client's id in place of the upstream's, before or after the result, however the bytes are cut", () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":"gw-req-1","result":{"a":1}}',
      '{"result":{"a":1},"jsonrpc":"2.0","id":"gw-req-1"}',
    ]) {
      for (const size of [1, 2, 3, 5, 8, 13, 64]) {
        const upstream = ResponseBytes.of(cut(text, size))!;
        expect(upstream.id).toBe("gw-req-1");
        const withId = upstream.withId(7);
        expect(textOf(withId)).toBe(text.replace('"gw-req-1"', "7"));
        expect(withId.byteLength).toBe(withId.joined().byteLength);
        expect(withId.id).toBe(7);
        // The layout follows the splice: a member added to the result after it lands inside the result.
        const completed = withId.withResultMember('"resultType":"complete"');
        expect(JSON.parse(textOf(completed))).toEqual({
          jsonrpc: "2.0",
          id: 7,
          result: { a: 1, resultType: "complete" },
        });
        expect(textOf(completed)).toContain('{"a":1,"resultType":"complete"}');
        // The pieces are views of the upstream's: none is copied.
        expect(completed.pieces.every((piece) => piece.byteLength > 0)).toBe(true);
      }
    }
  });

  it("adds a member to an empty result without a comma", () => {
    expect(textOf(of('{"jsonrpc":"2.0","id":1,"result":{ }}')!.withResultMember('"resultType":"complete"'))).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{ "resultType":"complete"}}',
    );
  });

  it("says whether the result is a tool error (the audit event reads only those)", () => {
    const error = of('{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}}')!;
    expect(error.toolError).toBe(true);
    expect(error.withId(2).toolError).toBe(true);
    expect(of('{"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[]}}')!.toolError).toBe(false);
  });

  it("says whether structuredContent is something a 2025 client cannot take", () => {
    expect(of('{"jsonrpc":"2.0","id":1,"result":{"structuredContent":[1]}}')!.structuredNotObject).toBe(true);
    expect(of('{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"a":[1]}}}')!.structuredNotObject).toBe(false);
    expect(of('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}')!.structuredNotObject).toBe(false);
  });

  it("says whether the text has a line break (an SSE event's data cannot carry one raw)", () => {
    expect(of('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}')!.lineBreaks).toBe(false);
    expect(of('{"jsonrpc":"2.0",\r\n"id":1,"result":{\n"content":[]}}')!.lineBreaks).toBe(true);
    // An escaped line break in a string is two characters, not a break.
    expect(of('{"jsonrpc":"2.0","id":1,"result":{"t":"a\\nb"}}')!.lineBreaks).toBe(false);
  });
});

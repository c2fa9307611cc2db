/**
 * core/response-bytes.ts: which upstream answers may be passed on as their bytes (exactly
 * one plain success response, checked whole), and the splices the relay and the
 * 2026-07-28 front make in them, which must equal what the text path makes.
 */
import { describe, expect, it } from "vitest";
import { isToolErrorBytes, responseHead, withIdBytes, withResultMemberBytes } from "../../src/core/response-bytes";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string) => encoder.encode(text);

describe("responseHead", () => {
  it.each([
    ['{"result":{"content":[]},"jsonrpc":"2.0","id":3}', 3],
    ['{"jsonrpc":"2.0","id":"gw-req-ab","result":{}}', "gw-req-ab"],
    [' {\n"jsonrpc" : "2.0" ,"id":-1.5e2,"result":{"a":[1,{"b":null}]}}\n', -150],
  ])("reads the id of %s", (text, id) => {
    expect(responseHead(bytes(text))).toEqual({ id });
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
    expect(responseHead(bytes(text))).toBeUndefined();
  });

  it("refuses bytes that are not well-formed UTF-8 (decoding would change them)", () => {
    const text = bytes('{"jsonrpc":"2.0","id":1,"result":{"t":"ab"}}');
    text[text.indexOf(0x61)] = 0xff;
    expect(responseHead(text)).toBeUndefined();
  });
});

describe("splices in an accepted response's bytes", () => {
  it("puts the client's id in place of the upstream's, before or after the result", () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":"gw-req-1","result":{"a":1}}',
      '{"result":{"a":1},"jsonrpc":"2.0","id":"gw-req-1"}',
    ]) {
      const upstream = bytes(text);
      expect(responseHead(upstream)).toEqual({ id: "gw-req-1" });
      const withId = withIdBytes(upstream, 7)!;
      expect(decoder.decode(withId)).toBe(text.replace('"gw-req-1"', "7"));
      // The layout follows the splice: a member added to the result after it lands inside the result.
      const completed = withResultMemberBytes(withId, '"resultType":"complete"')!;
      expect(JSON.parse(decoder.decode(completed))).toEqual({
        jsonrpc: "2.0",
        id: 7,
        result: { a: 1, resultType: "complete" },
      });
      expect(decoder.decode(completed)).toContain('{"a":1,"resultType":"complete"}');
    }
  });

  it("adds a member to an empty result without a comma", () => {
    const upstream = bytes('{"jsonrpc":"2.0","id":1,"result":{ }}');
    responseHead(upstream);
    expect(decoder.decode(withResultMemberBytes(upstream, '"resultType":"complete"'))).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{ "resultType":"complete"}}',
    );
  });

  it("says whether the result is a tool error (the audit event reads only those)", () => {
    const error = bytes('{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}}');
    const success = bytes('{"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[]}}');
    responseHead(error);
    responseHead(success);
    expect(isToolErrorBytes(error)).toBe(true);
    expect(isToolErrorBytes(withIdBytes(error, 2)!)).toBe(true);
    expect(isToolErrorBytes(success)).toBe(false);
    expect(isToolErrorBytes(bytes("{}"))).toBeUndefined();
  });

  it("splices nothing in bytes it did not accept", () => {
    const other = bytes('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect(withIdBytes(other, 2)).toBeUndefined();
    expect(withResultMemberBytes(other, '"x":1')).toBeUndefined();
  });
});

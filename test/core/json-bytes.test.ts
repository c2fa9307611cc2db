/**
 * Reading a notification on its bytes (core/json-bytes.ts): whatever it accepts, the
 * ordinary path (decode, JSON.parse, validate) accepts too and reads the same method,
 * level and `_meta`; what the relay passes on as bytes is exactly what that path sends.
 */
import { describe, expect, it } from "vitest";
import { notificationHead } from "../../src/core/json-bytes";
import { kindOf } from "../../src/core/jsonrpc";
import { readUpstreamMessage } from "../../src/core/validate-message";

const encoder = new TextEncoder();

/** What the ordinary path makes of the bytes, in the shape `notificationHead` answers. */
function ordinaryHead(bytes: Uint8Array): { method: string; level?: string; meta: boolean } | undefined {
  const wire = readUpstreamMessage(new TextDecoder().decode(bytes));
  if (!wire || kindOf(wire.message) !== "notification" || !("method" in wire.message)) return undefined;
  const params = wire.message.params;
  const level = params?.["level"];
  return {
    method: wire.message.method,
    ...(typeof level === "string" ? { level } : {}),
    meta: params !== undefined && "_meta" in params,
  };
}

/** `notificationHead` is sound: a head only where the ordinary path reads the same, and the bytes are its text's UTF-8. */
function expectSound(bytes: Uint8Array): void {
  const head = notificationHead(bytes);
  if (head === undefined) return;
  expect(head).toEqual(ordinaryHead(bytes));
  expect(encoder.encode(new TextDecoder().decode(bytes))).toEqual(bytes);
}

const LOG =
  '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"x","data":{"index":1,"pad":"ppp","é":["😀",1e3,-0.5,true,false,null,{}]}}}';

describe("notificationHead", () => {
  it.each<[string, string, ReturnType<typeof notificationHead>]>([
    ["a log message", LOG, { method: "notifications/message", level: "info", meta: false }],
    [
      "without params",
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      { method: "notifications/initialized", meta: false },
    ],
    [
      "members in another order, spaces around",
      ' \r\n\t{ "params" : { "data" : [ ] , "level" : "debug" } , "method" : "m" , "jsonrpc" : "2.0" } \n',
      { method: "m", level: "debug", meta: false },
    ],
    [
      "a level that is not a string",
      '{"jsonrpc":"2.0","method":"m","params":{"level":3}}',
      { method: "m", meta: false },
    ],
    [
      "_meta in params",
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"_meta":{"k":1}}}',
      { method: "notifications/progress", meta: true },
    ],
    [
      "escapes inside data",
      '{"jsonrpc":"2.0","method":"m","params":{"data":"a\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\udc00"}}',
      { method: "m", meta: false },
    ],
    [
      "an escaped name deeper than params",
      '{"jsonrpc":"2.0","method":"m","params":{"data":{"\\u0069d":1}}}',
      { method: "m", meta: false },
    ],
    ["a request", '{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}', undefined],
    ["a response", '{"jsonrpc":"2.0","id":1,"result":{}}', undefined],
    ["a notification with a result member", '{"jsonrpc":"2.0","method":"m","result":{}}', undefined],
    ["another version", '{"jsonrpc":"1.0","method":"m"}', undefined],
    ["no version", '{"method":"m"}', undefined],
    ["an empty method", '{"jsonrpc":"2.0","method":""}', undefined],
    ["a method that is not a string", '{"jsonrpc":"2.0","method":1}', undefined],
    ["params that are not an object", '{"jsonrpc":"2.0","method":"m","params":[1]}', undefined],
    ["an escaped top-level name (it could be id)", '{"jsonrpc":"2.0","method":"m","\\u0069d":1}', undefined],
    [
      "an escaped name in params (it could be _meta)",
      '{"jsonrpc":"2.0","method":"m","params":{"\\u005fmeta":{}}}',
      undefined,
    ],
    ["an escaped method", '{"jsonrpc":"2.0","method":"notifications\\/message"}', undefined],
    ["an escaped level", '{"jsonrpc":"2.0","method":"m","params":{"level":"in\\u0066o"}}', undefined],
    ["a duplicate method", '{"jsonrpc":"2.0","method":"a","method":"b"}', undefined],
    ["a duplicate level", '{"jsonrpc":"2.0","method":"m","params":{"level":"info","level":"debug"}}', undefined],
    ["a duplicate params", '{"jsonrpc":"2.0","method":"m","params":{},"params":{"_meta":{}}}', undefined],
    ["two values", '{"jsonrpc":"2.0","method":"m"} {}', undefined],
    ["an array", '[{"jsonrpc":"2.0","method":"m"}]', undefined],
    ["a trailing comma", '{"jsonrpc":"2.0","method":"m",}', undefined],
    ["a bad escape", '{"jsonrpc":"2.0","method":"m","params":{"d":"\\x"}}', undefined],
    ["a short unicode escape", '{"jsonrpc":"2.0","method":"m","params":{"d":"\\u12"}}', undefined],
    ["a control character in a string", '{"jsonrpc":"2.0","method":"m","params":{"d":"a\tb"}}', undefined],
    ["a leading zero", '{"jsonrpc":"2.0","method":"m","params":{"d":01}}', undefined],
    ["a bare dot", '{"jsonrpc":"2.0","method":"m","params":{"d":1.}}', undefined],
    ["an exponent without digits", '{"jsonrpc":"2.0","method":"m","params":{"d":1e+}}', undefined],
    ["a plus sign", '{"jsonrpc":"2.0","method":"m","params":{"d":+1}}', undefined],
    ["a misspelt literal", '{"jsonrpc":"2.0","method":"m","params":{"d":tru}}', undefined],
    ["an unclosed array", '{"jsonrpc":"2.0","method":"m","params":{"d":[1,2}}', undefined],
    ["a byte order mark first", '\uFEFF{"jsonrpc":"2.0","method":"m"}', undefined],
    ["nothing", "", undefined],
  ])("%s", (_label, text, expected) => {
    const bytes = encoder.encode(text);
    expect(notificationHead(bytes)).toEqual(expected);
    expectSound(bytes);
  });

  it.each<[string, number[]]>([
    ["a lone continuation byte", [0x80]],
    ["an overlong form", [0xc0, 0xaf]],
    ["an encoded surrogate", [0xed, 0xa0, 0x80]],
    ["past U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
    ["a character cut short", [0xe2, 0x82]],
    ["a 0xff byte", [0xff]],
  ])("refuses bytes that are not UTF-8: %s", (_label, bad) => {
    const [head, tail] = ['{"jsonrpc":"2.0","method":"m","params":{"d":"a', 'b"}}'].map((part) => encoder.encode(part));
    const bytes = new Uint8Array([...head!, ...bad, ...tail!]);
    expect(notificationHead(bytes)).toBeUndefined();
  });

  it("reads the same as the ordinary path however a notification is damaged", () => {
    const base = encoder.encode(LOG.replace('"ppp"', '"p\\u00e9\\"q"'));
    const replacements = [
      0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x3a, 0x2c, 0x20, 0x30, 0x65, 0x2d, 0x2e, 0x75, 0xc3, 0x80, 0x00, 0x0a,
    ];
    let accepted = 0;
    for (let at = 0; at < base.length; at++) {
      expectSound(base.subarray(0, at));
      for (const byte of replacements) {
        const changed = base.slice();
        changed[at] = byte;
        expectSound(changed);
        const inserted = new Uint8Array([...base.subarray(0, at), byte, ...base.subarray(at)]);
        expectSound(inserted);
        if (notificationHead(changed)) accepted++;
      }
      expectSound(new Uint8Array([...base.subarray(0, at), ...base.subarray(at + 1)]));
    }
    expect(accepted).toBeGreaterThan(0);
  });
});

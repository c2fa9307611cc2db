/**
 * core/response-check.ts against an oracle made of the runtime's own parts: a fatal UTF-8
 * decode, `JSON.parse`, and the text reader of core/raw-json.ts for what JSON.parse hides
 * (duplicate and escaped member names, a value's own text). Random responses, many of them
 * broken at random bytes, each split into random pieces: the checker must accept exactly
 * what the oracle calls a plain success response, with the same layout, however it is cut.
 */
import { describe, expect, it } from "vitest";
import { members, rootSpan } from "../../src/core/raw-json";
import { MAX_PLAIN_DEPTH, MAX_PLAIN_ID_BYTES, ResponseCheck, type ResponseLayout } from "../../src/core/response-check";

const encoder = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** What the checker should answer, worked out from the decoded text. */
function oracle(bytes: Uint8Array): Omit<ResponseLayout, "id" | "result"> | undefined {
  let text: string;
  try {
    text = strict.decode(bytes);
    JSON.parse(text);
  } catch {
    return undefined;
  }
  const root = rootSpan(text);
  if (text[root.start] !== "{") return undefined;
  const top = members(text, root);
  const raw = (span: { start: number; end: number }) => text.slice(span.start, span.end);
  const names = top.map((m) => m.key);
  if (top.some((m) => text.slice(m.keyStart, m.value.start).includes("\\"))) return undefined;
  if (names.length !== 3 || ["jsonrpc", "id", "result"].some((name) => names.filter((n) => n === name).length !== 1))
    return undefined;
  const value = (name: string) => top.find((m) => m.key === name)!.value;
  if (raw(value("jsonrpc")) !== '"2.0"') return undefined;
  const id = raw(value("id"));
  if (!/^["\-0-9]/.test(id) || (id.startsWith('"') && id.includes("\\"))) return undefined;
  if (encoder.encode(id).length > MAX_PLAIN_ID_BYTES) return undefined;
  const result = value("result");
  if (text[result.start] !== "{") return undefined;
  const inner = members(text, result);
  if (inner.some((m) => text.slice(m.keyStart, m.value.start).includes("\\"))) return undefined;
  const types = inner.filter((m) => m.key === "resultType");
  if (types.length > 1 || types.some((m) => raw(m.value) !== '"complete"')) return undefined;
  const structured = inner.filter((m) => m.key === "structuredContent").at(-1);
  return {
    idRaw: id,
    toolError: inner.some((m) => m.key === "isError" && raw(m.value) === "true"),
    structuredNotObject: structured !== undefined && text[structured.value.start] !== "{",
    resultEmpty: inner.length === 0,
    complete: types.length === 1,
    lineBreaks: /[\r\n]/.test(text),
  };
}

/** A deterministic generator (mulberry32), so that a failure names its seed. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const space = () => pick(["", "", "", " ", "\n", " \t\r\n "]);
  const string = () =>
    `"${pick(["", "a", "héllo", "\\n", "\\u00e9", '\\"q', "😀", "x".repeat(int(40)), "isError", "resultType", "id"])}"`;
  const number = () =>
    pick(["0", "-0", "12", "-3.5", "1e9", "2.5E-3", "-0.0e+1", "123456789012345678901234567890", "1.5", "10.25", "7"]);
  const value = (depth: number): string => {
    const kind = depth > 7 ? int(4) : int(6);
    if (kind === 0) return string();
    if (kind === 1) return number();
    if (kind === 2) return pick(["true", "false", "null"]);
    if (kind === 3) return string();
    if (kind === 4)
      return `[${space()}${Array.from({ length: int(4) }, () => value(depth + 1)).join(`${space()},${space()}`)}${space()}]`;
    return object(depth + 1, () => pick(["a", "isError", "structuredContent", "content", "é"]));
  };
  const object = (depth: number, name: () => string): string =>
    `{${space()}${Array.from({ length: int(4) }, () => `"${name()}"${space()}:${space()}${value(depth)}`).join(`${space()},${space()}`)}${space()}}`;
  const response = (): string => {
    const parts = [
      `"jsonrpc"${space()}:${space()}${pick(['"2.0"', '"2.0"', '"2.0"', '"1.0"', "2"])}`,
      `"id"${space()}:${space()}${pick(["1", "-7", "0", "3.25", '"gw-req-1"', '"é"', '"a\\"b"', "null", "[1]"])}`,
      `"result"${space()}:${space()}${
        int(8) === 0
          ? value(2)
          : `{${space()}${Array.from(
              { length: int(4) },
              () =>
                `"${pick(["content", "content", "isError", "structuredContent", "_meta", "x", "resultType", "res\\u0075ltType"])}"${space()}:${space()}${
                  int(3) === 0
                    ? pick(["true", "false", "{}", "[]", '"s"', '"complete"', '"complete"', '"input_required"'])
                    : value(3)
                }`,
            ).join(",")}${space()}}`
      }`,
    ];
    if (int(6) === 0) parts.push(pick(['"extra":1', '"id":2', '"jsonrpc":"2.0"', '"i\\u0064":1']));
    if (int(8) === 0) parts.pop();
    for (let i = parts.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [parts[i], parts[j]] = [parts[j]!, parts[i]!];
    }
    return `${space()}{${space()}${parts.join(`${space()},${space()}`)}${space()}}${space()}`;
  };
  /** The bytes, sometimes broken: a byte changed, cut short, or something added. */
  const bytesOf = (text: string): Uint8Array => {
    const bytes = encoder.encode(text);
    const roll = int(6);
    if (roll === 0 && bytes.length > 0) {
      const at = int(bytes.length);
      bytes[at] = pick([0x22, 0x5c, 0x7b, 0x7d, 0x2c, 0x3a, 0x80, 0xc0, 0xed, 0xff, 0x0a, 0x31, 0x00]);
      return bytes;
    }
    if (roll === 1) return bytes.subarray(0, int(bytes.length));
    if (roll === 2) return encoder.encode(text + pick(["x", "{}", " ", "\u0000", "1"]));
    return bytes;
  };
  const pieces = (bytes: Uint8Array): Uint8Array[] => {
    const out: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; ) {
      const size = pick([1, 1, 2, 3, 7, 64, bytes.length]);
      out.push(bytes.subarray(at, at + size));
      at += size;
    }
    return out;
  };
  return { response, bytesOf, pieces, int };
}

function check(pieces: readonly Uint8Array[]): ResponseLayout | undefined {
  const checker = new ResponseCheck();
  for (const piece of pieces) checker.push(piece);
  return checker.end();
}

describe("ResponseCheck", () => {
  it("accepts exactly the plain success responses, however the bytes are cut (3,000 random cases)", () => {
    let accepted = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const random = generator(seed);
      const bytes = random.bytesOf(random.response());
      const expected = oracle(bytes);
      const whole = check([bytes]);
      const cut = check(random.pieces(bytes));
      const context = `seed ${seed}: ${new TextDecoder().decode(bytes)}`;
      expect(cut === undefined ? undefined : { ...cut }, context).toEqual(whole);
      if (expected === undefined) {
        expect(whole, context).toBeUndefined();
        continue;
      }
      accepted++;
      expect(whole, context).toBeDefined();
      const { id, result, ...rest } = whole!;
      expect(rest, context).toEqual(expected);
      const decoded = new TextDecoder().decode(bytes.subarray(id.start, id.end));
      expect(decoded, context).toBe(expected.idRaw);
      expect(bytes[result.start], context).toBe(0x7b);
      expect(bytes[result.end - 1], context).toBe(0x7d);
    }
    // The generator must reach both answers often enough to mean something.
    expect(accepted).toBeGreaterThan(300);
    expect(accepted).toBeLessThan(2700);
  });

  it("reads deep runs of common tokens the same wherever a piece ends (the deep fast path and its hand-overs)", () => {
    const text = String.raw`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"items":[{"id":12,"name":"item 12","tags":["a","b"],"score":1.5,"e":2.5e3,"f":7E1,"g":-1,"h":0.5,"s":"h\u00e9 é \"q\"","o":{},"l":[[],[1,{"a":[]}]],"t":true}, {"n":null}]}}}`;
    const bytes = encoder.encode(text);
    const whole = check([bytes]);
    expect(whole).toMatchObject({ idRaw: "1", toolError: false, structuredNotObject: false });
    expect(oracle(bytes)).toBeDefined();
    for (let at = 0; at <= bytes.length; at++)
      expect(check([bytes.subarray(0, at), bytes.subarray(at)]), `cut at ${at}`).toEqual(whole);
    // Each byte's own piece too.
    expect(check(Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)))).toEqual(whole);
  });

  it(`is not plain nested deeper than ${MAX_PLAIN_DEPTH} levels (what it keeps per level is bounded)`, () => {
    const nested = (levels: number) =>
      encoder.encode(`{"jsonrpc":"2.0","id":1,"result":{"a":${"[".repeat(levels)}${"]".repeat(levels)}}}`);
    expect(check([nested(MAX_PLAIN_DEPTH - 2)])).toBeDefined();
    expect(check([nested(MAX_PLAIN_DEPTH - 1)])).toBeUndefined();
    expect(check([nested(100_000)])).toBeUndefined();
  });

  it("takes a result that says it is complete, and no other resultType", () => {
    const answer = (members: string) => encoder.encode(`{"jsonrpc":"2.0","id":1,"result":{${members}}}`);
    expect(check([answer('"content":[],"resultType":"complete"')])).toMatchObject({ complete: true });
    expect(check([answer('"content":[]')])).toMatchObject({ complete: false });
    expect(check([answer('"resultType":"input_required","inputRequests":{}')])).toBeUndefined();
    expect(check([answer('"resultType":"complete","resultType":"complete"')])).toBeUndefined();
    expect(check([answer('"resultType":"compl\\u0065te"')])).toBeUndefined();
  });

  it("refuses an id longer than it keeps, and an escaped name in the result", () => {
    const long = `{"jsonrpc":"2.0","id":"${"a".repeat(MAX_PLAIN_ID_BYTES)}","result":{}}`;
    expect(check([encoder.encode(long)])).toBeUndefined();
    const escaped = '{"jsonrpc":"2.0","id":1,"result":{"result\\u0054ype":"input_required"}}';
    expect(check([encoder.encode(escaped)])).toBeUndefined();
  });

  it("reads a 4 MiB string and deep nesting in pieces without holding them", () => {
    const deep = `${"[".repeat(9_000)}${"]".repeat(9_000)}`;
    const text = `{"result":{"content":[{"type":"text","text":"${"é".repeat(2 * 1024 * 1024)}"}],"deep":${deep}},"jsonrpc":"2.0","id":9}`;
    const bytes = encoder.encode(text);
    const pieces: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += 65_537) pieces.push(bytes.subarray(at, at + 65_537));
    expect(check(pieces)).toMatchObject({ idRaw: "9", toolError: false });
  });
});

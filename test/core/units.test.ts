/**
 * Table tests for the framework-free pieces: raw JSON spans, SSE reading and framing,
 * aggregated names, merged cursors, sealed session tokens, server-request ids, random ids.
 */
import { describe, expect, it } from "vitest";
import { encodeJson } from "../../src/core/base64url";
import { decodeCursor, encodeCursor } from "../../src/relay/cursor";
import { qualifyName, splitName } from "../../src/core/names";
import { elements, members, RawJsonError, rootSpan, splice, withMessageId } from "../../src/core/raw-json";
import { decodeServerRequestId, encodeServerRequestId } from "../../src/relay/server-requests";
import { openSession, sealSession, type SessionState } from "../../src/front/legacy/session-token";
import { readSse, sseFrame } from "../../src/core/sse";
import { randomHex, randomHexId } from "../../src/core/ids";

describe("raw JSON spans", () => {
  it.each([
    ['{"a":1e3,"b":"x\\"y","c":[1,{"d":-0}]}', ["a", "b", "c"], ["1e3", '"x\\"y"', '[1,{"d":-0}]']],
    ['  { "2" : 10.0 , "1":null }  ', ["2", "1"], ["10.0", "null"]],
    ['{"\\u00e9":12345678901234567890}', ["é"], ["12345678901234567890"]],
    ["{}", [], []],
  ])("reads the members of %s as they are written", (text, keys, values) => {
    const found = members(text, rootSpan(text));
    expect(found.map((m) => m.key)).toEqual(keys);
    expect(found.map((m) => text.slice(m.value.start, m.value.end))).toEqual(values);
  });

  it("reads array elements and splices one without touching the rest", () => {
    const text = '[ {"name":"a","x":1.50}, "s", [] ]';
    const spans = elements(text, rootSpan(text));
    expect(spans.map((s) => text.slice(s.start, s.end))).toEqual(['{"name":"a","x":1.50}', '"s"', "[]"]);
    const name = members(text, spans[0]!)[0]!.value;
    expect(splice(text, [{ span: name, raw: '"b"' }])).toBe('[ {"name":"b","x":1.50}, "s", [] ]');
  });

  it.each([["{"], ['{"a" 1}'], ["[1,]x"], ['"open'], [""]])("rejects %j", (text) => {
    expect(() => members(text, rootSpan(text))).toThrow(RawJsonError);
  });
});

describe("SSE", () => {
  function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    return new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
        controller.close();
      },
    });
  }

  it.each([
    ["one event", ["event: message\ndata: {}\n\n"], [{ event: "message", data: "{}" }]],
    ["split across chunks and CRLF", ['data: {"a"', ":1}\r", "\n\r\n"], [{ event: "message", data: '{"a":1}' }]],
    ["multi-line data", ['data: {\ndata:  "a": 1\ndata: }\n\n'], [{ event: "message", data: '{\n "a": 1\n}' }]],
    [
      "comments and a priming event",
      [": keepalive\n\nid: 7\nretry: 300\ndata: \n\n"],
      [{ event: "message", data: "", id: "7", retry: 300 }],
    ],
  ])("reads %s", async (_label, chunks, expected) => {
    const events = [];
    for await (const event of readSse(streamOf(...chunks))) events.push(event);
    expect(events).toEqual(expected);
  });

  it("frames text with line breaks so a reader gets the same bytes back", async () => {
    const text = '{\n  "a": "x",\n  "b": 1.0\n}';
    const [event] = await (async () => {
      const out = [];
      for await (const e of readSse(streamOf(new TextDecoder().decode(sseFrame(text))))) out.push(e);
      return out;
    })();
    expect(event?.data).toBe(text);
  });
});

describe("aggregated names", () => {
  it.each([
    ["github", "get_user", "github___get_user"],
    ["a", "x".repeat(60), `a___${"x".repeat(60)}`],
  ])("qualifies %s / %s", (upstream, name, expected) => {
    expect(qualifyName(upstream, name)).toBe(expected);
  });

  it("shortens past 64 characters, deterministically and distinctly", () => {
    const one = qualifyName("upstream", "y".repeat(80));
    const two = qualifyName("upstream", `${"y".repeat(79)}z`);
    expect(one).toHaveLength(64);
    expect(one).toMatch(/^upstream___y+_[0-9a-f]{8}$/);
    expect(one).toBe(qualifyName("upstream", "y".repeat(80)));
    expect(one).not.toBe(two);
    expect(splitName(one)).toMatchObject({ upstream: "upstream", maybeShortened: true });
  });

  it.each([
    ["an emoji", "\u{1F600}"],
    ["a CJK extension B character", "\u{20000}"],
  ])("never cuts a surrogate pair when shortening a name with %s", (_label, character) => {
    // Every offset, so the cut falls inside the pair for one of them.
    for (let pad = 0; pad < 4; pad++) {
      const name = `${"n".repeat(40 + pad)}${character.repeat(20)}`;
      const short = qualifyName("svc", name);
      expect(short).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      expect(short.length).toBeGreaterThanOrEqual(63);
      expect(short.length).toBeLessThanOrEqual(64);
      expect(short).toBe(qualifyName("svc", name));
      expect(short).toMatch(/_[0-9a-f]{8}$/);
      expect(splitName(short)).toMatchObject({ upstream: "svc", maybeShortened: true });
    }
  });

  it.each([["no-separator"], ["___leading"], ["trailing___"]])("does not split %s", (name) => {
    expect(splitName(name)).toBeUndefined();
  });

  it("splits at the first separator", () => {
    expect(splitName("a___b___c")).toEqual({ upstream: "a", name: "b___c", maybeShortened: false });
  });
});

describe("merged cursors", () => {
  const binding = { secret: "unit-test-secret-0123456789", sid: "s1", method: "tools/list" };

  it("round-trips each upstream's cursor", async () => {
    const pending = [
      ["a", "opaque/cursor+=="],
      ["b", null],
    ] as const;
    expect(await decodeCursor(await encodeCursor(pending, binding), binding)).toEqual(pending);
  });

  it.each([["!!"], ["e30"], [42], ["W10x"], ["W10.AAAA"], [`${encodeJson(Array(2000).fill(["a", null]))}.AAAA`]])(
    "rejects %j",
    async (cursor) => {
      await expect(decodeCursor(cursor, binding)).rejects.toThrow(/cursor was not issued by this gateway/);
    },
  );

  it.each([
    ["another session", { ...binding, sid: "s2" }],
    ["another list", { ...binding, method: "prompts/list" }],
    ["another secret", { ...binding, secret: "another-secret-0123456789" }],
  ])("rejects a cursor issued for %s", async (_label, other) => {
    const cursor = await encodeCursor([["a", null]], binding);
    await expect(decodeCursor(cursor, other)).rejects.toThrow(/cursor was not issued by this gateway/);
  });

  it("rejects a cursor whose upstreams were changed", async () => {
    const cursor = await encodeCursor([["a", null]], binding);
    const forged = `${encodeJson([
      ["a", null],
      ["a", null],
    ])}${cursor.slice(cursor.indexOf("."))}`;
    await expect(decodeCursor(forged, binding)).rejects.toThrow(/cursor was not issued by this gateway/);
  });
});

describe("session tokens", () => {
  const state: SessionState = {
    sid: "0123456789abcdef0123456789abcdef",
    protocolVersion: "2025-11-25",
    clientCapabilities: { sampling: {} },
    clientInfo: { name: "c", version: "1" },
    principal: "anonymous",
    route: "",
    upstreams: { a: { sessionId: "s-1", protocolVersion: "2025-06-18", capabilities: ["tools"] } },
    exp: Math.floor(Date.now() / 1000) + 60,
  };
  const secret = "unit-test-secret-0123456789";

  it("opens what it sealed, and hides the contents", async () => {
    const token = await sealSession(state, secret);
    // Neither in clear nor merely encoded. (It checked "s-1", which base64url text holds by
    // chance about once in 260,000 characters: a clean-clone CI run failed on it.)
    for (const visible of [state.sid, state.principal, state.protocolVersion, encodeJson(state).slice(0, 40)])
      expect(token).not.toContain(visible);
    const opened = await openSession(token, secret);
    expect(opened.ok && opened.value).toEqual(state);
  });

  it.each([
    ["another secret", async (t: string) => openSession(t, "some-other-secret-0123"), "malformed"],
    [
      "a flipped character",
      async (t: string) => openSession(t.slice(0, 20) + (t[20] === "A" ? "B" : "A") + t.slice(21), secret),
      "malformed",
    ],
    ["after expiry", async (t: string) => openSession(t, secret, (state.exp + 1) * 1000), "expired"],
  ])("refuses a token with %s", async (_label, open, reason) => {
    const result = await open(await sealSession(state, secret));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBe(reason);
  });

  // The isolate keeps tokens it opened: a kept one is still refused to another secret and after expiry.
  it.each([
    ["another secret", (t: string) => openSession(t, "some-other-secret-0123"), "malformed"],
    ["after expiry", (t: string) => openSession(t, secret, (state.exp + 1) * 1000), "expired"],
  ])("refuses a token it opened before: %s", async (_label, open, reason) => {
    const token = await sealSession(state, secret);
    expect((await openSession(token, secret)).ok).toBe(true);
    expect(await open(token)).toEqual({ ok: false, reason });
    expect(await openSession(token, secret)).toEqual({ ok: true, value: state });
  });
});

describe("server-to-client request ids", () => {
  it.each([[0], [17], ["abc"], ['with "quotes"']])("round-trips %j", (id) => {
    const encoded = encodeServerRequestId("alpha", id);
    expect(decodeServerRequestId(encoded)).toEqual({ upstream: "alpha", id });
  });

  it("rewrites only the id of a message", () => {
    const text = '{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"x":1.0}}';
    expect(withMessageId(text, "gw.x")).toBe(
      '{"jsonrpc":"2.0","id":"gw.x","method":"sampling/createMessage","params":{"x":1.0}}',
    );
  });

  it.each([["plain"], [5], ["gw.!!!"]])("does not decode %j", (id) => {
    expect(decodeServerRequestId(id)).toBeUndefined();
  });
});

describe("SSE events too large to hold", () => {
  function streamOf(text: string, size: number): ReadableStream<Uint8Array> {
    const bytes = new TextEncoder().encode(text);
    let at = 0;
    return new ReadableStream({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, at + size));
        at += size;
      },
    });
  }

  it.each([
    ["one long data line", `data: ${"x".repeat(200)}\n\n`, "x".repeat(200)],
    [
      "lines joined with \\n",
      `data: a${"y".repeat(100)}\ndata: b${"z".repeat(100)}\n\n`,
      `a${"y".repeat(100)}\nb${"z".repeat(100)}`,
    ],
    ["CRLF line ends", `data: ${"w".repeat(150)}\r\n\r\n`, "w".repeat(150)],
  ])("streams %s, then goes on to the next event", async (_label, first, expected) => {
    for (const size of [1, 7, 40]) {
      // chunks smaller than the bound, as a real stream of a huge event arrives
      const seen: string[] = [];
      for await (const event of readSse(streamOf(`${first}event: message\ndata: after\n\n`, size), 50)) {
        seen.push(event.large ? `large:${await new Response(event.large).text()}` : event.data);
      }
      expect(seen).toEqual([`large:${expected}`, "after"]);
    }
  });
});

describe("random ids", () => {
  it("are 32 lowercase hex digits, all distinct, across many refills of the random pool", () => {
    // 16 bytes each from a 4 KiB pool: 5,000 ids refill it about 20 times.
    const ids = Array.from({ length: 5_000 }, () => randomHexId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("take their length in bytes, and spread over every hex digit", () => {
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    expect(randomHex(1)).toMatch(/^[0-9a-f]{2}$/);
    const digits = new Set(Array.from({ length: 200 }, () => randomHex(4)).join(""));
    expect(digits.size).toBe(16);
  });

  it.each([0, -1, 1.5, 65])("refuse a length of %s bytes", (bytes) => {
    expect(() => randomHex(bytes)).toThrow(RangeError);
  });
});

/**
 * Notifications of a call's SSE stream that the gateway does not change reach the client
 * as the upstream's own bytes, never decoded (upstream/reply-body.ts, core/json-bytes.ts);
 * the ones it changes (task ids, cancelled request ids), and bytes that are not UTF-8,
 * are read as messages as before. The upstream (test/fixtures/script-upstream.ts) answers
 * with an SSE body written here, a few bytes at a time; and the reader itself offers the
 * bytes of exactly the plain notifications.
 */
import { describe, expect, inject, it } from "vitest";
import { sseMessages } from "../../src/upstream/reply-body";
import { initialize, post, type Vars } from "../helpers/gateway";

const ORIGIN = inject("scriptUpstream");
const encoder = new TextEncoder();

/** A fresh scripted upstream answering its calls with `script`, written `chunk` bytes at a time. */
async function scripted(
  script: string | Uint8Array,
  chunk: number,
): Promise<{ name: string; tag: string; vars: Vars }> {
  const tag = crypto.randomUUID();
  const name = `s${tag.slice(0, 8)}`;
  await fetch(`${ORIGIN}/scripts/${tag}?chunk=${chunk}`, {
    method: "POST",
    body: typeof script === "string" ? encoder.encode(script) : script,
  });
  return {
    name,
    tag,
    vars: { UPSTREAMS: JSON.stringify([{ name, url: `${ORIGIN}/${tag}/mcp`, listCache: { ttlMs: 60_000 } }]) },
  };
}

const KEEPALIVE = encoder.encode(": keepalive\n\n");

/**
 * A test's time bound from the chunks its upstream writes. Each chunk is one socket write
 * (with a turn of Node's event loop) and one read in workerd: measured at 110-200 µs a chunk
 * read directly, and 200-390 µs through the gateway, at a load average of 14 on 2 cores;
 * independent of the reader's buffer size, so linear in the chunks. Written a byte at a
 * time, UNCHANGED_SCRIPT is about 100,000 chunks (20-39 s here), past the 20 s default under
 * load: the bound scales with the work instead of cutting it.
 */
function timeoutFor(bytes: number, chunk: number): number {
  const PER_CHUNK_MS = 1;
  const AT_LEAST_MS = 20_000;
  return Math.max(AT_LEAST_MS, Math.ceil(bytes / chunk) * PER_CHUNK_MS);
}

/** `bytes` without the keepalive comments between events (an answer writing nothing sends one every second). */
function withoutKeepalives(bytes: Uint8Array): Uint8Array {
  const kept: number[] = [];
  for (let at = 0; at < bytes.length; ) {
    const eventStart = at === 0 || (bytes[at - 1] === 0x0a && bytes[at - 2] === 0x0a);
    if (eventStart && KEEPALIVE.every((byte, i) => bytes[at + i] === byte)) at += KEEPALIVE.length;
    else kept.push(bytes[at++]!);
  }
  return new Uint8Array(kept);
}

/** The bytes of the answer to a call of the scripted tool on `route`, as the client receives them, keepalive comments aside. */
async function callBytes(
  up: { name: string; vars: Vars },
  route: "direct" | "aggregated",
  id = 7,
): Promise<Uint8Array> {
  const path = route === "direct" ? `/mcp/${up.name}` : "/mcp";
  const { session } = await initialize(path, { vars: up.vars });
  const tool = route === "direct" ? "scripted" : `${up.name}___scripted`;
  const response = await post(
    path,
    { jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: {} } },
    { session, vars: up.vars },
  );
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  return withoutKeepalives(new Uint8Array(await response.arrayBuffer()));
}

/** The client's SSE answer: one `message` event a message, as the gateway frames it. */
function frames(...texts: string[]): string {
  return texts.map((text) => `event: message\ndata: ${text}\n\n`).join("");
}

const ANSWER = '{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"done ü"}]}}';
const answered = (id: number) => ANSWER.replace("{{id}}", String(id));

/** Notifications the gateway passes on unchanged: escapes, characters of 2 to 4 bytes, number forms, spaces, members in any order, one longer than the reader's first buffer. */
const UNCHANGED = [
  '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"text":"é 😀 𝄞 \\u00e9 \\" \\\\ \\/","n":[1.0,1e3,-0,12345678901234567890]}}}',
  ' { "method" : "notifications/progress" , "params" : { "progressToken" : "p\\u0031" , "progress" : 1 } , "jsonrpc" : "2.0" } ',
  `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"${"é".repeat(50_000)}"}}`,
  '{"params":{"uri":"file:///r\\u00e9sum\\u00e9"},"jsonrpc":"2.0","method":"notifications/resources/updated"}',
];
/** The same notifications framed every way SSE allows: CRLF, CR, LF, comments, ids, event names, no space after the colon. */
const UNCHANGED_SCRIPT =
  `: hello\r\nid: 1\r\nevent: message\r\ndata: ${UNCHANGED[0]}\r\n\r\n` +
  `data: ${UNCHANGED[1]}\r\r` +
  `id: 2\ndata:${UNCHANGED[2]}\n: between\n\n` +
  `event: message\r\ndata: ${UNCHANGED[3]}\r\n\r\n` +
  `data: ${ANSWER}\n\n`;

describe("notifications the gateway does not change", () => {
  const cases = [
    ["direct", 1],
    ["direct", 5],
    ["direct", 1 << 20],
    ["aggregated", 3],
    ["aggregated", 4096],
  ] as const;
  for (const [route, chunk] of cases) {
    const timeout = timeoutFor(encoder.encode(UNCHANGED_SCRIPT).length, chunk);
    it(`reach the client as the upstream's bytes (${route} route, written ${chunk} bytes at a time)`, {
      timeout,
    }, async () => {
      const up = await scripted(UNCHANGED_SCRIPT, chunk);
      expect(await callBytes(up, route)).toEqual(encoder.encode(frames(...UNCHANGED, answered(7))));
    });
  }
});

describe("messages larger than the buffer the answer is framed in (256 KiB)", () => {
  it("a notification and an answer reach the client byte for byte", async () => {
    const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${"😀".repeat(80_000)}"}}`;
    const answer = `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"${"ü".repeat(100_000)}"}]}}`;
    const up = await scripted(
      `data: ${note}\r\n\r\ndata: ${note.replace("info", "debug")}\n\ndata: ${answer}\n\n`,
      64 * 1024,
    );
    expect(await callBytes(up, "direct")).toEqual(
      encoder.encode(frames(note, note.replace("info", "debug"), answer.replace("{{id}}", "7"))),
    );
  });
});

describe("notifications the gateway reads as messages", () => {
  it("a task named in params._meta: its id is the gateway's", async () => {
    const note =
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}}';
    const up = await scripted(`data: ${note}\n\ndata: ${ANSWER}\n\n`, 7);
    const texts = new TextDecoder()
      .decode(await callBytes(up, "direct"))
      .split("\n\n")
      .filter(Boolean);
    const relayed = JSON.parse(texts[0]!.replace("event: message\ndata: ", "")) as {
      params: { _meta: Record<string, { taskId: string }> };
    };
    expect(relayed.params._meta["io.modelcontextprotocol/related-task"]!.taskId).toMatch(/^gwt\./);
  });

  it.each([
    ["aggregated", (text: string) => expect(text).toMatch(/"requestId":"gw\.[^"]+"/)],
    ["direct", (text: string) => expect(text).toContain('"requestId":"r-1"')],
  ] as const)(
    "notifications/cancelled: its request id is the one the client knows (%s route)",
    async (route, check) => {
      const note = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1","reason":"x"}}';
      const up = await scripted(`data: ${note}\n\ndata: ${ANSWER}\n\n`, 7);
      const text = new TextDecoder().decode(await callBytes(up, route));
      check(text.split("\n\n")[0]!);
      expect(text.endsWith(frames(answered(7)))).toBe(true);
    },
  );

  it("bytes that are not UTF-8: U+FFFD, as decoding always gave", async () => {
    const [head, tail] = [
      'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a',
      `b"}}\n\ndata: ${ANSWER}\n\n`,
    ].map((part) => encoder.encode(part));
    const up = await scripted(new Uint8Array([...head!, 0xff, 0xe2, 0x82, ...tail!]), 3);
    expect(new TextDecoder().decode(await callBytes(up, "direct"))).toBe(
      frames(
        '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a\uFFFD\uFFFDb"}}',
        answered(7),
      ),
    );
  });

  it("JSON over several data lines: the same text, framed again", async () => {
    const up = await scripted(
      `data: {"jsonrpc":"2.0",\ndata:  "method":"notifications/message",\r\ndata: "params":{"level":"info","data":"é"}}\n\ndata: ${ANSWER}\n\n`,
      2,
    );
    expect(new TextDecoder().decode(await callBytes(up, "direct"))).toBe(
      `event: message\ndata: {"jsonrpc":"2.0",\ndata:  "method":"notifications/message",\ndata: "params":{"level":"info","data":"é"}}\n\n${frames(answered(7))}`,
    );
  });
});

describe("a list_changed on a call's stream", () => {
  it("drops the list held for the upstream before the client sees it", async () => {
    const change = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}';
    const up = await scripted(`data: ${change}\n\ndata: ${ANSWER}\n\n`, 1 << 20);
    const path = `/mcp/${up.name}`;
    const { session } = await initialize(path, { vars: up.vars });
    const list = async (id: number) =>
      (await post(path, { jsonrpc: "2.0", id, method: "tools/list" }, { session, vars: up.vars })).text();
    const lists = async () =>
      ((await (await fetch(`${ORIGIN}/count/${up.tag}`)).json()) as Record<string, number>)["tools/list"];
    await list(1);
    await list(2);
    expect(await lists()).toBe(1);
    const call = await post(
      path,
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "scripted", arguments: {} } },
      { session, vars: up.vars },
    );
    expect(new TextDecoder().decode(withoutKeepalives(new Uint8Array(await call.arrayBuffer())))).toBe(
      frames(change, answered(3)),
    );
    await list(4);
    expect(await lists()).toBe(2);
  });
});

describe("sseMessages with a taker of notifications as bytes", () => {
  it("offers each plain notification on one data line, and reads the others and any it declines as messages", async () => {
    const [log, progress, request, multi, status] = [
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"é"}}',
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}',
      '{"jsonrpc":"2.0","id":9,"method":"roots/list"}',
      '{"jsonrpc":"2.0",\ndata: "method":"notifications/message"}',
      '{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t"}}',
    ];
    const body = new Response(
      [log, progress, request, multi, status, answered(1)].map((text) => `data: ${text}\r\n\r\n`).join(""),
    ).body!;
    const offered: string[] = [];
    const pass = async (bytes: Uint8Array, head: { method: string; level?: string }) => {
      offered.push(`${head.method} ${head.level ?? "-"} ${new TextDecoder().decode(bytes)}`);
      return head.method !== "notifications/tasks/status";
    };
    const read: string[] = [];
    for await (const wire of sseMessages(body, { upstream: "u", env: {} }, {}, undefined, pass)) read.push(wire.text);
    expect(offered).toEqual([
      `notifications/message info ${log}`,
      `notifications/progress - ${progress}`,
      `notifications/tasks/status - ${status}`,
    ]);
    expect(read).toEqual([request, multi.replace("\ndata: ", "\n"), status, answered(1)]);
  });

  it("never offers the first line of an event of several: together they are not a message", async () => {
    const body = new Response('data: {"jsonrpc":"2.0","method":"notifications/message"}\ndata: {}\n\n').body!;
    const offered: string[] = [];
    const read = async () => {
      for await (const _ of sseMessages(body, { upstream: "u", env: {} }, {}, undefined, async (_bytes, head) => {
        offered.push(head.method);
        return true;
      }));
    };
    await expect(read()).rejects.toThrow(/broke off its answer \(bad-response\)/);
    expect(offered).toEqual([]);
  });
});

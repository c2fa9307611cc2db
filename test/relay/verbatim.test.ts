/**
 * Byte-for-byte relay, read off the wire (never through an SDK client, which
 * re-parses): tool schemas with every trap, whole tool objects on /mcp/<upstream>,
 * results no policy changes, and the client's arguments on the way up.
 */
import { describe, expect, inject, it } from "vitest";
import {
  rawEnvelope,
  SECOND_TOOL,
  TRAP_INPUT_SCHEMA,
  TRAP_OUTPUT_SCHEMA,
  TRAP_RESULT,
  TRAP_TOOL,
} from "../fixtures/raw-upstream-bytes";
import { initialize, messageTexts, post } from "../helpers/gateway";
import { READ_PAYLOAD_DEFINITION } from "../../src/features/offload/sys-tools";
import { MAX_RESUMPTIONS } from "../../src/upstream/stream-resumption";

const { raw } = inject("fixtureUrls");
const SSE_URL = raw.replace(/\/mcp$/, "/sse/mcp");
const VARS = {
  UPSTREAMS: JSON.stringify([
    { name: "raw", url: raw },
    { name: "rawsse", url: SSE_URL },
  ]),
};
/** No answer of these upstreams is offloaded: /mcp/<upstream> then lists nothing of the gateway's own. */
const NO_OFFLOAD = { ...VARS, OFFLOAD: JSON.stringify({ exclude: ["raw___*", "rawsse___*"] }) };

async function postText(
  path: string,
  session: string,
  body: string,
  vars: Record<string, unknown> = VARS,
): Promise<string> {
  const texts = await messageTexts(await post(path, body, { session, vars }));
  return texts[texts.length - 1]!;
}

/** What the upstream itself answers, fetched directly from inside workerd. */
async function upstreamText(url: string, body: string): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body,
  });
  const text = await response.text();
  if (!url.includes("/sse/")) return text;
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice(6))
    .join("\n");
}

describe.each([
  ["JSON", "raw", raw],
  ["SSE", "rawsse", SSE_URL],
])("an upstream answering %s", (_mode, name, url) => {
  const sse = url === SSE_URL;

  it("reaches the client byte for byte on /mcp/<upstream>, whole tool objects included", async () => {
    const { session } = await initialize(`/mcp/${name}`, { vars: NO_OFFLOAD });
    for (const body of [
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"page-2"}}',
    ]) {
      const relayed = await postText(`/mcp/${name}`, session, body, NO_OFFLOAD);
      expect(relayed).toBe(await upstreamText(url, body));
    }
    const page = await postText(`/mcp/${name}`, session, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}', NO_OFFLOAD);
    expect(page).toBe(rawEnvelope(3, `{"tools":[${TRAP_TOOL}],"nextCursor":"page-2"}`, sse));
  });

  it("keeps every upstream byte on /mcp/<upstream> where answers may be offloaded, the read tool appended to the first page", async () => {
    const { session } = await initialize(`/mcp/${name}`, { vars: VARS });
    const page = await postText(`/mcp/${name}`, session, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}');
    expect(page).toBe(
      rawEnvelope(3, `{"tools":[${TRAP_TOOL},${JSON.stringify(READ_PAYLOAD_DEFINITION)}],"nextCursor":"page-2"}`, sse),
    );
    const body = '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"page-2"}}';
    expect(await postText(`/mcp/${name}`, session, body)).toBe(await upstreamText(url, body));
  });

  it("keeps every schema byte on /mcp, where only the name changes", async () => {
    const { session } = await initialize("/mcp", { vars: VARS });
    const first = await postText("/mcp", session, '{"jsonrpc":"2.0","id":"p1","method":"tools/list"}');
    expect(first).toContain(TRAP_TOOL.replace('"name":"trap"', `"name":"${name}___trap"`));
    expect(first).toContain(`"inputSchema":${TRAP_INPUT_SCHEMA}`);
    expect(first).toContain(`"outputSchema":${TRAP_OUTPUT_SCHEMA}`);
    const cursor = (JSON.parse(first) as { result: { nextCursor: string } }).result.nextCursor;
    const second = await postText(
      "/mcp",
      session,
      JSON.stringify({ jsonrpc: "2.0", id: "p2", method: "tools/list", params: { cursor } }),
    );
    expect(second).toContain(SECOND_TOOL.replace('"name":"second"', `"name":"${name}___second"`));
  });

  it("relays results as bytes on both routes", async () => {
    for (const path of [`/mcp/${name}`, "/mcp"]) {
      const { session } = await initialize(path, { vars: VARS });
      const tool = path === "/mcp" ? `${name}___trap` : "trap";
      const relayed = await postText(
        path,
        session,
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${tool}","arguments":{}}}`,
      );
      expect(relayed).toBe(rawEnvelope(7, TRAP_RESULT, sse));
    }
  });
});

describe("the client's bytes on the way up", () => {
  it("keeps the arguments' numbers and key order, changing only the name on /mcp (and adding the trace context)", async () => {
    const args = '{"big":12345678901234567890,"f":1.50,"2":"b","1":"a","e":"\\u00e9"}';
    for (const [path, name] of [
      ["/mcp/raw", "body"],
      ["/mcp", "raw___body"],
    ] as const) {
      const { session } = await initialize(path, { vars: VARS });
      const answer = JSON.parse(
        await postText(
          path,
          session,
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`,
        ),
      ) as { result: { content: { text: string }[] } };
      // Byte for byte, but for the name and the gateway's trace context added to params._meta.
      const sent = answer.result.content[0]!.text;
      const start = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"body","arguments":${args}`;
      expect(sent.slice(0, start.length)).toBe(start);
      expect(sent.slice(start.length)).toMatch(/^,"_meta":\{"traceparent":"00-[0-9a-f]{32}-[0-9a-f]{16}-01"\}\}\}$/);
    }
  });
});

describe("a stream cut before the answer", () => {
  it("is resumed with Last-Event-ID and the answer still arrives", async () => {
    const { session } = await initialize("/mcp", { vars: VARS });
    const texts = await messageTexts(
      await post(
        "/mcp",
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rawsse___cut","arguments":{}}}',
        { session, vars: VARS },
      ),
    );
    expect(texts.map((t) => JSON.parse(t) as { method?: string; result?: unknown })).toMatchObject([
      { method: "notifications/message" },
      { result: { content: [{ text: "resumed" }] } },
    ]);
  });

  it("whose last event id cannot be sent back as a header ends the call as a stream without its answer, not as a gateway bug", async () => {
    const { session } = await initialize("/mcp", { vars: VARS });
    const texts = await messageTexts(
      await post(
        "/mcp",
        '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"rawsse___cut-unsendable-id","arguments":{}}}',
        { session, vars: VARS },
      ),
    );
    const last = JSON.parse(texts.at(-1)!) as { id: number; error: { code: number; message: string; data?: unknown } };
    // Taken as a resume point, the id made the Last-Event-ID header throw: "Internal error in the gateway".
    expect(last.id).toBe(6);
    expect(last.error.message).toBe('upstream "rawsse" closed its stream without answering the request');
    expect(last.error.data).toEqual({ upstream: "rawsse", reason: "no-response" });
  });

  it("is followed as long as each stream brings something: an upstream that polls past the resumption limit still answers", async () => {
    const { session } = await initialize("/mcp", { vars: VARS });
    const texts = await messageTexts(
      await post(
        "/mcp",
        `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rawsse___poll","arguments":{"polls":${MAX_RESUMPTIONS + 5}}}}`,
        { session, vars: VARS },
      ),
    );
    const messages = texts.map((t) => JSON.parse(t) as { method?: string; result?: unknown });
    expect(messages.filter((m) => m.method === "notifications/message")).toHaveLength(MAX_RESUMPTIONS + 6);
    expect(messages.at(-1)).toMatchObject({ result: { content: [{ text: "polled" }] } });
  });
});

/**
 * An upstream's JSON answer whose headers declare a small Content-Length beside
 * `Transfer-Encoding: chunked`: HTTP/1.1 frames such a body by its chunks (the length is
 * ignored), and workerd's fetch reads it so while keeping the header. The gateway must
 * hold it to the same bounds as any answer whose length it does not know: past 16 MiB it
 * is refused, or offloaded, never read whole into the isolate's memory. The same for a
 * Worker upstream (service binding), whose body nothing frames by the length it declares.
 * Through the real gateway in workerd, against a server on loopback
 * (test/fixtures/faulty-upstream.ts) and a Worker (test/fixtures/lying-length-worker.js).
 */
import { inject, describe, expect, it } from "vitest";
import { initialize, request, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const faulty = inject("faultyUpstreamUrl");

let tags = 0;
function upstream(): Vars {
  return { UPSTREAMS: JSON.stringify([{ name: "up", url: `${faulty}/json-lying-length/l${Date.now()}-${tags++}` }]) };
}

describe("a chunked JSON answer that also declares a small Content-Length", () => {
  it("is refused past the 16 MiB a held message may have", async () => {
    // Offload excluded: an answer a 2026-07-28 client gets is held whole (its id is spliced in), and 17 MiB are past the bound.
    const vars = { ...upstream(), OFFLOAD: JSON.stringify({ exclude: ["*"] }) };
    const answer = await modern("/mcp/up", "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(answer.error?.message).toMatch(/larger than 16777216 bytes/);
  });

  it("flows to a 2025 client whole, by the bytes that come, when no layer reads it", async () => {
    // Never held: the flow hands each piece on as it is checked (src/core/response-flow.ts).
    const vars = { ...upstream(), OFFLOAD: JSON.stringify({ exclude: ["*"] }) };
    const { session } = await initialize("/mcp/up", { vars });
    const answer = await request("/mcp/up", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(answer.error).toBeUndefined();
    expect(answer.result.content[0].text).toHaveLength(17 * 1024 * 1024);
  });

  it("is offloaded by the bytes that come, not the length it declares", async () => {
    const vars = upstream();
    const { session } = await initialize("/mcp/up", { vars });
    const answer = await request("/mcp/up", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(answer.error).toBeUndefined();
    expect(JSON.stringify(answer.result)).toMatch(/payloadId/);
  });
});

describe("a Worker upstream's answer that streams past the Content-Length it declares", () => {
  // LYING_LENGTH_SERVICE (vitest.config.ts): 17 MiB under `Content-Length: 100`.
  const service = (): Vars => ({ UPSTREAMS: JSON.stringify([{ name: "bound", service: "LYING_LENGTH_SERVICE" }]) });

  it("is refused past the 16 MiB a held message may have", async () => {
    const vars = { ...service(), OFFLOAD: JSON.stringify({ exclude: ["*"] }) };
    const { session } = await initialize("/mcp/bound", { vars });
    const answer = await request("/mcp/bound", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(answer.error?.message).toMatch(/larger than 16777216 bytes/);
  });
});

/**
 * A body the gateway refuses outside the MCP endpoint, sent with Node's fetch to the
 * gateway `npm start` runs: the sign-in form of an upstream's per-user sign-in
 * (`POST /oauth/upstream/<name>/start`: 413 past its limit, 400 when it is not the form) and
 * an admin API document (past its limit). The client reads the answer, rather than a
 * connection dropped while it was still sending ("terminated"), whether the size is
 * declared or the body is chunked. As in message-size.test.ts, workerd in-process tests
 * never show this: it happens on the socket.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { countedJunk } from "../helpers/counted-body.ts";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

const ADMIN_TOKEN = "e2e-refused-body-admin-token-0123456789";
/** Over every limit here (sign-in form 64 KiB, admin document 512 KiB), under what is drained before answering. */
const JUNK_BYTES = 5 * 1024 * 1024;
/** An upstream users sign in to; never reached: the form is refused before. */
const UPSTREAMS = [{ name: "acme", url: "http://127.0.0.1:9/mcp", auth: { type: "oauth" } }];

let gateway: Gateway;

beforeAll(async () => {
  gateway = await startGateway({ port: await freePort(), vars: { UPSTREAMS, ADMIN_TOKEN } });
});
afterAll(async () => {
  await gateway?.stop();
});

const BODIES = [
  ["with a declared length", () => new Uint8Array(JUNK_BYTES).fill(0x78)],
  ["sent chunked", () => countedJunk(JUNK_BYTES).body],
] as const;

function send(path: string, contentType: string, body: Uint8Array | ReadableStream<Uint8Array>, headers = {}) {
  const init = { method: "POST", headers: { "content-type": contentType, ...headers }, body, duplex: "half" };
  return fetch(`${gateway.url}${path}`, init as RequestInit);
}

describe.each(BODIES)("a 5 MB body %s", (_, body) => {
  it("to the sign-in form answers a 413 page Node's fetch reads", async () => {
    const response = await send("/oauth/upstream/acme/start", "application/x-www-form-urlencoded", body());
    expect(response.status).toBe(413);
    expect(await response.text()).toContain("A sign-in form holds one link, at most 64 KB.");
  });

  it("to the sign-in form, not as a form, answers a 400 page Node's fetch reads", async () => {
    const response = await send("/oauth/upstream/acme/start", "application/json", body());
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("Continue with the button of the sign-in page");
  });

  it("as an admin API document answers an error Node's fetch reads", async () => {
    const authorization = `Bearer ${ADMIN_TOKEN}`;
    const response = await fetch(`${gateway.url}/admin/filter-sets/junk`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization },
      body: body(),
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("larger than 524288 bytes");
  });
});

describe("after refused bodies", () => {
  it("the gateway keeps serving", async () => {
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const response = await fetch(`${gateway.url}/admin/filter-sets`, { headers });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });
});

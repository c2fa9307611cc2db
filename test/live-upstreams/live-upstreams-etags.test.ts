/**
 * Live upstreams' ETags are per upstream: GET /admin/upstreams/<name> answers the ETag of
 * that upstream's entry, and a PUT or DELETE with If-Match is refused (412) only when that
 * upstream changed since, not when another one did. Through the Worker, real KV.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, inject, it } from "vitest";
import { gatewayFetch } from "../helpers/gateway";
import { ADMIN_TOKEN, authVars } from "../helpers/auth";

const { origin } = inject("userCredentialsUpstream");
const VARS = authVars({ apiKeys: true }, { FILTER_CACHE_TTL_MS: "0" });
const label = crypto.randomUUID().slice(0, 6);
const [one, two] = [`etagone${label}`, `etagtwo${label}`];

/** A call of the live upstream routes, as on loopback under npm start (loopback URLs allowed). */
function live(method: string, name: string, body?: unknown, more: Record<string, string> = {}): Promise<Response> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", ...more };
  const init = { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) };
  return gatewayFetch(`http://127.0.0.1:8787/admin/upstreams/${name}?probe=false`, init, VARS);
}

describe("live upstreams' ETags", () => {
  afterAll(async () => {
    await (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV.delete("live-upstreams");
  });

  it("refuse a stale write to one upstream only when that upstream changed", async () => {
    expect((await live("PUT", one, { url: `${origin}/one${label}/mcp` })).status).toBe(201);
    expect((await live("PUT", two, { url: `${origin}/two${label}/mcp` })).status).toBe(201);
    const read = await live("GET", one);
    const etag = read.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);

    // Another upstream changes: one's ETag stays, and a write with it goes through.
    expect((await live("PUT", two, { url: `${origin}/two${label}/v2/mcp` })).status).toBe(200);
    expect((await live("GET", one)).headers.get("etag")).toBe(etag);
    const changed = await live("PUT", one, { url: `${origin}/one${label}/v2/mcp` }, { "if-match": etag });
    expect(changed.status, await changed.clone().text()).toBe(200);
    const fresh = changed.headers.get("etag")!;
    expect(fresh).not.toBe(etag);
    expect((await live("GET", one)).headers.get("etag")).toBe(fresh);

    // One changed since `etag` was read: refused, with the current ETag.
    const stale = await live("PUT", one, { url: `${origin}/one${label}/v3/mcp` }, { "if-match": etag });
    expect(stale.status).toBe(412);
    expect(stale.headers.get("etag")).toBe(fresh);
    expect((await live("DELETE", one, undefined, { "if-match": etag })).status).toBe(412);
    expect((await live("DELETE", one, undefined, { "if-match": fresh })).status).toBe(200);
    expect((await live("GET", two)).status).toBe(200);
  });
});

/**
 * GET /admin/api-keys lists keys from KV list metadata, a page at a time: one KV list per
 * page and no read per key (reading each record ran into the subrequest limit near 1,000
 * keys). Metadata never holds the key or its hash and stays under KV's 1024 bytes; keys
 * stored before (no metadata) are still listed, read one by one, a bounded number a page.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_METADATA_BYTES } from "../../src/features/api-keys/api-keys";
import { MAX_RECORD_READS_PER_PAGE } from "../../src/features/api-keys/api-key-listing";
import { admin, authVars, makeKey, storeKeyWithoutMetadata } from "../helpers/auth";
import { post, type Json } from "../helpers/gateway";

const VARS = authVars({ apiKeys: true });
const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const made: string[] = [];

afterAll(async () => {
  for (const id of made) await env.GATEWAY_KV.delete(`api-keys/${id}`);
});

/** The test KV, counting the calls the Worker makes of each method. */
function countingKv(): { kv: KVNamespace; calls: Record<string, number>; reads: unknown[] } {
  const calls: Record<string, number> = {};
  const reads: unknown[] = [];
  const kv = new Proxy(env.GATEWAY_KV, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls[String(property)] = (calls[String(property)] ?? 0) + 1;
        if (property === "get") reads.push(args[0]);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { kv, calls, reads };
}

/** Every page of the listing, `limit` a page, with the KV reads each page made. */
async function allPages(limit?: number): Promise<{ keys: Json[]; readsPerPage: number[] }> {
  const keys: Json[] = [];
  const readsPerPage: number[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const { kv, calls } = countingKv();
    const query = new URLSearchParams({
      ...(limit !== undefined ? { limit: String(limit) } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    const response = await admin("GET", `/api-keys?${query}`, undefined, { ...VARS, GATEWAY_KV: kv });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    keys.push(...body.apiKeys);
    readsPerPage.push(calls["get"] ?? 0);
    cursor = body.cursor;
    if (cursor === undefined) return { keys, readsPerPage };
  }
  throw new Error("the listing did not end");
}

describe("GET /admin/api-keys", () => {
  it("lists keys from their metadata: one KV list, no read per key", async () => {
    for (let i = 0; i < 5; i++)
      made.push(
        (await makeKey({ principal: `meta-${i}`, roles: ["user", `r-${i}`], email: `m${i}@example.com` }, VARS)).id,
      );
    const { kv, calls, reads } = countingKv();
    const response = await admin("GET", "/api-keys", undefined, { ...VARS, GATEWAY_KV: kv });
    const listed = ((await response.json()) as Json).apiKeys as Json[];
    // Other files' keys share this KV, some stored without metadata (read, as the tests below
    // show): none of these keys, stored with it, is read.
    expect(reads.filter((key) => made.some((id) => key === `api-keys/${id}`))).toEqual([]);
    expect(calls["list"]).toBe(1);
    for (let i = 0; i < 5; i++) {
      const entry = listed.find((k) => k.id === made[i]);
      expect(entry).toMatchObject({
        principal: `meta-${i}`,
        roles: ["user", `r-${i}`],
        email: `m${i}@example.com`,
        createdAt: expect.any(String),
      });
      expect(entry.hash).toBeUndefined();
    }
  });

  it("keeps neither the key nor its hash in metadata, and stays under 1024 bytes (a long listing is read instead)", async () => {
    const small = await makeKey({ principal: "small", roles: ["user"] }, VARS);
    const roles = Array.from({ length: 64 }, (_, i) => `a-role-with-a-long-name-${i}-${"x".repeat(40)}`);
    const big = await makeKey({ principal: "big", roles }, VARS);
    made.push(small.id, big.id);
    for (const key of [small, big]) {
      const { metadata, value } = await env.GATEWAY_KV.getWithMetadata(`api-keys/${key.id}`);
      const text = JSON.stringify(metadata);
      expect(new TextEncoder().encode(text).byteLength).toBeLessThanOrEqual(MAX_METADATA_BYTES);
      // The secret is everything after the id: base64url, which may itself contain "_".
      expect(text).not.toContain(key.key.slice(`mgw_${key.id}_`.length));
      expect(text).not.toContain(JSON.parse(value!).hash);
    }
    const { keys } = await allPages();
    expect(keys.find((k) => k.id === big.id)).toMatchObject({ principal: "big", roles });
    expect(keys.find((k) => k.id === small.id)).toMatchObject({ principal: "small", roles: ["user"] });
  });

  it("lists keys stored before metadata, reading at most MAX_RECORD_READS_PER_PAGE a page, and they still authenticate", async () => {
    const legacy: string[] = [];
    for (let i = 0; i < MAX_RECORD_READS_PER_PAGE + 5; i++) {
      const key = await storeKeyWithoutMetadata({ principal: `legacy-${i}`, roles: ["user"] });
      legacy.push(key.id);
      if (i === 0)
        expect((await post("/mcp", INIT, { vars: VARS, headers: { authorization: `Bearer ${key.key}` } })).status).toBe(
          200,
        );
    }
    made.push(...legacy);
    const { keys, readsPerPage } = await allPages();
    expect(Math.max(...readsPerPage)).toBeLessThanOrEqual(MAX_RECORD_READS_PER_PAGE);
    const ids = keys.map((k) => k.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [i, id] of legacy.entries()) {
      const entry = keys.find((k) => k.id === id);
      expect(entry).toMatchObject({ principal: `legacy-${i}`, roles: ["user"] });
      expect(entry.hash).toBeUndefined();
    }
  });

  it("pages with limit and cursor, each key once", async () => {
    const { keys: whole } = await allPages();
    const { keys: paged } = await allPages(3);
    expect(paged.map((k) => k.id).sort()).toEqual(whole.map((k) => k.id).sort());
  });

  it.each([
    ["limit=0", "?limit=0", /limit/],
    ["limit=1001", "?limit=1001", /limit/],
    ["a made-up cursor", "?cursor=bm9wZQ", /cursor/],
  ])("refuses %s with 400", async (_label, query, message) => {
    const response = await admin("GET", `/api-keys${query}`, undefined, VARS);
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).error).toMatch(message);
  });
});

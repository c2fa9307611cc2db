/**
 * The gateway's own client (upstream/internal-client.ts), the one page loop
 * (upstream/list-pages.ts) and the internal callers' factory (context/internal-caller.ts):
 * requests to a real SDK upstream on loopback from inside workerd, with results parsed and
 * failures typed; the page loop's bounds over a source that pages without end.
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { fail, ok } from "../../src/core/errors";
import { METHOD_NOT_FOUND } from "../../src/core/jsonrpc";
import type { UpstreamConfig } from "../../src/config/upstreams";
import { INTERNAL_PRINCIPALS, internalCaller, internalPool } from "../../src/context/internal-caller";
import { callUpstream, listUpstream } from "../../src/upstream/internal-client";
import { describeInternalFailure } from "../../src/upstream/internal-failure";
import { followPages, type PageSource } from "../../src/upstream/list-pages";

const { alpha } = inject("fixtureUrls");
const bindings = env as unknown as Record<string, unknown>;
const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;

function upstreamAt(name: string, url: string): UpstreamConfig {
  return { name, url, headers: {}, timeoutMs: 5_000, idleTimeoutMs: 5_000 };
}

async function consolePool() {
  return internalPool(await internalCaller(INTERNAL_PRINCIPALS.console, "legacy"), bindings, kv);
}

describe("the internal client", () => {
  it("gives a request's result parsed, in a session the pool opened for the principal", async () => {
    const listed = await callUpstream(await consolePool(), upstreamAt("alpha", alpha), { method: "tools/list" });
    expect(listed.ok).toBe(true);
    const names = listed.ok ? (listed.value["tools"] as { name: string }[]).map((tool) => tool.name) : [];
    expect(names).toContain("echo");
  });

  it("follows a list and says it was seen whole", async () => {
    const listed = await listUpstream(await consolePool(), upstreamAt("alpha", alpha), "tools/list", "tools");
    expect(listed.ok && listed.value.complete).toBe(true);
    expect(listed.ok && listed.value.items.some((item) => item["name"] === "echo")).toBe(true);
  });

  it("turns the upstream's JSON-RPC error into a typed failure with its code", async () => {
    const answer = await callUpstream(await consolePool(), upstreamAt("alpha", alpha), { method: "no/such-method" });
    expect(answer).toMatchObject({ ok: false, reason: "rpc-error", upstream: "alpha", code: METHOD_NOT_FOUND });
    expect(!answer.ok && describeInternalFailure(answer)).toMatch(/^no\/such-method answered with an error: /);
  });

  it("turns an upstream no one answers at into the pool's typed failure", async () => {
    const down = upstreamAt("down", "http://127.0.0.1:9/mcp");
    const answer = await callUpstream(await consolePool(), down, { method: "ping" });
    expect(answer).toMatchObject({ ok: false, reason: "unreachable", upstream: "down" });
  });
});

describe("the internal callers' factory", () => {
  it("keeps each principal's upstream sessions under a key of its own, the same all day", async () => {
    const day = 20_000 * 24 * 60 * 60;
    const sweep = await internalCaller(INTERNAL_PRINCIPALS.pinSweep, "modern", day + 10);
    const later = await internalCaller(INTERNAL_PRINCIPALS.pinSweep, "modern", day + 80_000);
    const probe = await internalCaller(INTERNAL_PRINCIPALS.probe, "legacy", day + 10);
    expect(later.upstreamClient.sid).toBe(sweep.upstreamClient.sid);
    expect(probe.upstreamClient.sid).not.toBe(sweep.upstreamClient.sid);
    expect(sweep.identity).toMatchObject({ principal: "mcp-edge-gateway/pin-sweep", roles: [], era: "modern" });
    expect(internalPool(sweep, bindings, kv).clientVersion).toBe("2026-07-28");
    expect(internalPool(probe, bindings, kv)).not.toHaveProperty("identity");
  });
});

/** A list without end: page n answers `per` items and a cursor to page n + 1. */
function endless(per: number, seen: (string | undefined)[]): PageSource {
  return async (cursor) => {
    seen.push(cursor);
    const page = cursor === undefined ? 0 : Number(cursor);
    const tools = Array.from({ length: per }, (_, i) => ({ name: `t${page}-${i}` }));
    return ok(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools, nextCursor: String(page + 1) } }));
  };
}

describe("followPages", () => {
  it("stops at the page bound and says the list was not seen whole", async () => {
    const seen: (string | undefined)[] = [];
    const walk = await followPages("u", "tools/list", endless(2, seen), () => undefined, { maxPages: 3 });
    expect(walk).toEqual({ ok: true, value: { complete: false, pages: 3 } });
    expect(seen).toEqual([undefined, "1", "2"]);
  });

  it("stops at the character bound after the page that reaches it", async () => {
    const seen: (string | undefined)[] = [];
    const walk = await followPages("u", "tools/list", endless(100, seen), () => undefined, { maxChars: 3_000 });
    expect(walk.ok && walk.value.complete).toBe(false);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.length).toBeLessThan(5);
  });

  it("ends, complete, on a page without a cursor; the reader may stop it early", async () => {
    const pages = ['{"result":{"tools":[],"nextCursor":"a"}}', '{"result":{"tools":[{"name":"x"}]}}'];
    const source: PageSource = async (_cursor, page) => ok(pages[page] ?? "");
    expect(await followPages("u", "tools/list", source, () => undefined)).toEqual(ok({ complete: true, pages: 2 }));
    const early = await followPages("u", "tools/list", source, () => "stop");
    expect(early).toEqual(ok({ complete: false, pages: 1 }));
  });

  it.each([
    ['{"error":{"code":-32601,"message":"Method not found"}}', { reason: "rpc-error", code: -32601 }],
    ['{"error":"odd"}', { reason: "rpc-error", code: 0, message: "error" }],
    ['{"result":[]}', { reason: "no-answer", detail: "answered without a result" }],
  ])("a page %s is a typed failure", async (text, failure) => {
    const walk = await followPages(
      "u",
      "tools/list",
      async () => ok(text),
      () => undefined,
    );
    expect(walk).toMatchObject({ ok: false, upstream: "u", method: "tools/list", ...failure });
  });

  it("hands a failed page source's failure on, and a page its reader cannot read becomes one", async () => {
    const down = fail({ reason: "unreachable" as const, upstream: "u", detail: "refused" });
    expect(
      await followPages(
        "u",
        "tools/list",
        async () => down,
        () => undefined,
      ),
    ).toEqual(down);
    const odd = await followPages("u", "tools/list", endless(1, []), () => "unreadable");
    expect(odd).toMatchObject({ ok: false, reason: "no-answer", detail: "gave no list" });
  });
});

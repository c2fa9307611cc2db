/**
 * Lists held at the edge (upstream/list-cache.ts, relay/cached-list.ts), through the
 * Worker: the list requests that reach the upstream are counted at the fixture
 * (test/fixtures/list-cache-upstream.ts). A 2026-07-28 upstream's hints and the
 * operator's `listCache` for a 2025 one decide how long; list_changed from either era
 * drops the copy; a private list is never another principal's; personas apply after
 * the cache; the tool-search catalog stops reaching the upstream.
 */
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { readSse } from "../../src/core/sse";
import {
  forgetHeldLists,
  heldList,
  holdList,
  holdOf,
  LIST_CACHE_MAX_BYTES,
  listGeneration,
  type ListKeys,
} from "../../src/upstream/list-cache";
import { admin, authVars, makeKey } from "../helpers/auth";
import { gatewayFetch, initialize, messageTexts, post, request, type Json, type Vars } from "../helpers/gateway";
import { modern, modernPost } from "../helpers/modern";

const ORIGIN = inject("listCacheUpstream");
const TTL_MS = 60_000;

/** The tool names of a tools/list result, the gateway's own (`sys___*`) left out. */
function upstreamTools(result: Json): string[] {
  return (result.tools as Json[])
    .map((tool) => tool.name as string)
    .filter((name) => !name.startsWith("sys___"))
    .sort();
}

/** A fresh upstream (its own tag, so its own counts and version) and the vars naming it. */
function upstream(
  kind: "modern" | "legacy",
  hint = "none",
  listCache?: unknown,
): { name: string; tag: string; vars: Vars } {
  const tag = crypto.randomUUID();
  const name = `lc${tag.slice(0, 8)}`;
  const url = kind === "modern" ? `${ORIGIN}/modern/${hint}/${tag}/mcp` : `${ORIGIN}/legacy/${tag}/mcp`;
  return {
    name,
    tag,
    vars: { UPSTREAMS: JSON.stringify([{ name, url, ...(listCache === undefined ? {} : { listCache }) }]) },
  };
}

/** The tools/list requests that reached the upstream of `tag`. */
async function listsAt(tag: string): Promise<number> {
  const counts = (await (await fetch(`${ORIGIN}/count/${tag}`)).json()) as Record<string, number>;
  return counts["tools/list"] ?? 0;
}

/** A 2025 client's session on `path`: list (the answer's text) and call. */
async function client2025(path: string, vars: Vars, headers: Record<string, string> = {}) {
  const { session } = await initialize(path, { vars, headers });
  let id = 100;
  return {
    session,
    listText: async () =>
      (
        await messageTexts(
          await post(path, { jsonrpc: "2.0", id: id++, method: "tools/list" }, { session, vars, headers }),
        )
      ).at(-1)!,
    names: async () => upstreamTools((await request(path, session, "tools/list", undefined, { vars, headers })).result),
    call: (name: string, args: Record<string, unknown> = {}) =>
      request(path, session, "tools/call", { name, arguments: args }, { vars, headers }),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("a 2026-07-28 upstream's hints", () => {
  it.each(["direct", "aggregated"])(
    "%s route: within ttlMs one list request reaches the upstream, and the client gets its bytes again",
    async (route) => {
      const up = upstream("modern", `public-${TTL_MS}`);
      const path = route === "direct" ? `/mcp/${up.name}` : "/mcp";
      const client = await client2025(path, up.vars);
      const first = await client.listText();
      const second = await client.listText();
      expect(await listsAt(up.tag)).toBe(1);
      // The same answer but for its id (the merged list's own bytes around it included).
      expect(second).toBe(first.replace('"id":100', '"id":101'));
      expect(upstreamTools(JSON.parse(second).result)).toHaveLength(3);
    },
  );

  it("lists again once ttlMs has passed", async () => {
    const up = upstream("modern", `private-${TTL_MS}`);
    const client = await client2025(`/mcp/${up.name}`, up.vars);
    await client.listText();
    await client.listText();
    expect(await listsAt(up.tag)).toBe(1);
    vi.setSystemTime(Date.now() + TTL_MS + 1);
    await client.listText();
    expect(await listsAt(up.tag)).toBe(2);
  });

  it("holds nothing when the upstream gives ttlMs 0 (the SDK's default), nor when the operator says listCache.ttlMs 0", async () => {
    for (const up of [upstream("modern", "none"), upstream("modern", `public-${TTL_MS}`, { ttlMs: 0 })]) {
      const client = await client2025(`/mcp/${up.name}`, up.vars);
      await client.listText();
      await client.listText();
      expect(await listsAt(up.tag)).toBe(2);
    }
  });

  it("drops the list when the upstream says tools/list_changed on a listen, and lists the new one", async () => {
    const up = upstream("modern", `public-${TTL_MS}`);
    const path = `/mcp/${up.name}`;
    const names = async () => upstreamTools((await modern(path, "tools/list", {}, { vars: up.vars })).result);
    expect(await names()).toEqual(["bump", "echo", "v1"]);
    expect(await names()).toEqual(["bump", "echo", "v1"]);
    expect(await listsAt(up.tag)).toBe(1);
    const listening = await modernPost(
      path,
      "subscriptions/listen",
      { notifications: { toolsListChanged: true } },
      { vars: up.vars },
    );
    const events = readSse(listening.body!);
    expect(JSON.parse((await events.next()).value!.data).method).toBe("notifications/subscriptions/acknowledged");
    expect(
      (await modern(path, "tools/call", { name: "bump", arguments: {} }, { vars: up.vars })).result.content[0].text,
    ).toBe("version 2");
    let changed: Json;
    do changed = JSON.parse((await events.next()).value!.data);
    while (changed.method !== "notifications/tools/list_changed");
    await events.return(undefined);
    // Counted from here: the call may have listed the tools for their x-mcp-header annotations (upstream/modern-send.ts).
    const before = await listsAt(up.tag);
    expect(await names()).toEqual(["bump", "echo", "v2"]);
    expect(await listsAt(up.tag)).toBe(before + 1);
  });
});

describe("a 2025 upstream (no hints)", () => {
  it("reaches the upstream for every list unless the operator sets listCache", async () => {
    const plain = upstream("legacy");
    const plainClient = await client2025(`/mcp/${plain.name}`, plain.vars);
    await plainClient.listText();
    await plainClient.listText();
    expect(await listsAt(plain.tag)).toBe(2);

    const held = upstream("legacy", undefined, { ttlMs: TTL_MS });
    const heldClient = await client2025(`/mcp/${held.name}`, held.vars);
    await heldClient.listText();
    await heldClient.listText();
    expect(await listsAt(held.tag)).toBe(1);
  });

  it("drops the list when the upstream says tools/list_changed on its GET stream", async () => {
    const up = upstream("legacy", undefined, { ttlMs: TTL_MS });
    const path = `/mcp/${up.name}`;
    const client = await client2025(path, up.vars);
    expect(await client.names()).toEqual(["bump", "echo", "v1"]);
    expect(await client.names()).toEqual(["bump", "echo", "v1"]);
    expect(await listsAt(up.tag)).toBe(1);
    const stream = await gatewayFetch(
      path,
      {
        headers: {
          accept: "text/event-stream",
          "mcp-session-id": client.session,
          "mcp-protocol-version": "2025-11-25",
        },
      },
      up.vars,
    );
    expect(stream.status).toBe(200);
    const events = readSse(stream.body!);
    expect((await client.call("bump")).result.content[0].text).toBe("version 2");
    expect(JSON.parse((await events.next()).value!.data).method).toBe("notifications/tools/list_changed");
    await events.return(undefined);
    const before = await listsAt(up.tag);
    expect(await client.names()).toEqual(["bump", "echo", "v2"]);
    expect(await listsAt(up.tag)).toBe(before + 1);
  });
});

describe("who shares a held list", () => {
  const VARS = authVars();
  const allOf = (name: string) => ({ roles: ["lc-all"], allow: [`${name}___*`] });
  const echoOf = (name: string) => ({ roles: ["lc-echo"], allow: [`${name}___echo`] });

  it.each([
    ["private", upstream("modern", `private-${TTL_MS}`), 2],
    ["public", upstream("modern", `public-${TTL_MS}`), 1],
    ["the operator's private (2025)", upstream("legacy", undefined, { ttlMs: TTL_MS }), 2],
    ["the operator's public (2025)", upstream("legacy", undefined, { ttlMs: TTL_MS, cacheScope: "public" }), 1],
  ])(
    "%s: another principal's list reaches the upstream unless public; personas apply after the cache",
    async (_scope, up, requests) => {
      const vars = { ...VARS, ...up.vars };
      expect((await admin("PUT", `/personas/all-${up.name}`, allOf(up.name), vars)).status).toBe(200);
      expect((await admin("PUT", `/personas/echo-${up.name}`, echoOf(up.name), vars)).status).toBe(200);
      try {
        const [wide, narrow] = [
          await makeKey({ principal: `wide-${up.tag}`, roles: ["lc-all"] }, vars),
          await makeKey({ principal: `narrow-${up.tag}`, roles: ["lc-echo"] }, vars),
        ];
        const widely = await client2025("/mcp", vars, wide.headers);
        expect(await widely.names()).toEqual([`${up.name}___bump`, `${up.name}___echo`, `${up.name}___v1`]);
        expect(await widely.names()).toEqual([`${up.name}___bump`, `${up.name}___echo`, `${up.name}___v1`]);
        expect(await listsAt(up.tag)).toBe(1);
        const narrowly = await client2025("/mcp", vars, narrow.headers);
        expect(await narrowly.names()).toEqual([`${up.name}___echo`]);
        expect(await narrowly.names()).toEqual([`${up.name}___echo`]);
        expect(await listsAt(up.tag)).toBe(requests);
      } finally {
        await admin("DELETE", `/personas/all-${up.name}`, undefined, vars);
        await admin("DELETE", `/personas/echo-${up.name}`, undefined, vars);
      }
    },
  );

  it.each([
    ["public", 1],
    ["private", 2],
  ])("%s: a fresh isolate finds the list in the Cache API only when public", async (scope, requests) => {
    const up = upstream("modern", `${scope}-${TTL_MS}`);
    const client = await client2025(`/mcp/${up.name}`, up.vars);
    // Settled: the Cache API copy is put from waitUntil, after the answer.
    const first = (
      await messageTexts(
        await post(
          `/mcp/${up.name}`,
          { jsonrpc: "2.0", id: 100, method: "tools/list" },
          { session: client.session, vars: up.vars, settle: true },
        ),
      )
    ).at(-1)!;
    forgetHeldLists();
    expect(await client.listText()).toBe(first);
    expect(await listsAt(up.tag)).toBe(requests);
  });
});

describe("tool search", () => {
  it.each([
    [`public-${TTL_MS}`, 1],
    ["none", 3],
  ])("with hint %s, three searches list the upstream %i time(s)", async (hint, requests) => {
    const up = upstream("modern", hint);
    const path = `/mcp/${up.name}?catalog=search`;
    const client = await client2025(path, up.vars);
    for (let search = 0; search < 3; search++) {
      const found = await client.call("sys___search_tools", { query: "echo my text" });
      expect(JSON.parse(found.result.content[0].text).tools[0].name).toBe("echo");
    }
    expect(await listsAt(up.tag)).toBe(requests);
  });
});

describe("memory", () => {
  const keysOf = (n: number): ListKeys => ({
    upstream: "bounded",
    method: "tools/list",
    shared: `shared-${n}`,
    own: `own-${n}`,
  });
  /** A list answer of about `mib` MiB (UTF-16) that holds `private` for a minute. */
  const answerOf = (n: number, mib: number) =>
    `{"jsonrpc":"2.0","id":1,"result":{"tools":[],"pad":"${String(n).padEnd((mib * 1024 * 1024) / 2 - 64, "x")}","ttlMs":60000,"cacheScope":"private"}}`;

  afterEach(() => forgetHeldLists());

  it(`keeps at most ${LIST_CACHE_MAX_BYTES / 1024 / 1024} MiB, dropping the least recently used, and never one list past 2 MiB`, async () => {
    const hold = (n: number, mib: number) => {
      const answer = answerOf(n, mib);
      holdList(keysOf(n), holdOf(answer), answer, listGeneration("bounded", "tools/list"), () => {});
    };
    for (let n = 0; n < 6; n++) hold(n, 1.5); // 9 MiB asked for
    expect(await heldList(keysOf(0))).toBeUndefined();
    expect(await heldList(keysOf(1))).toBe(answerOf(1, 1.5)); // now the most recently used
    hold(6, 1.5);
    expect(await heldList(keysOf(1))).toBeDefined();
    expect(await heldList(keysOf(2))).toBeUndefined();
    hold(7, 2.5);
    expect(await heldList(keysOf(7))).toBeUndefined();
    expect(await heldList(keysOf(6))).toBeDefined();
  });
});

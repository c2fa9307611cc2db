/**
 * `subscriptions/listen` for 2026-07-28 clients on both routes, fed by a real 2025 SDK
 * upstream (alpha): the acknowledgement first, the subscription id on every
 * notification, list_changed and resource updates reaching the listener, unasked
 * notifications dropped, personas honoured, bounds, and what closing the stream undoes
 * at the upstream (observed there, per client name, with alpha's `listen_stats`).
 * Also: closing a modern tools/call's response stream cancels the call at the upstream.
 */
import { describe, expect, inject, it, vi } from "vitest";
import { readSse, type SseEvent } from "../../src/core/sse";
import { completeResult, LIST_TTL_MS } from "../../src/front/modern/caching";
import { MAX_LISTEN_URIS, withSubscriptionId } from "../../src/relay/subscription-notifications";
import { MAX_LISTEN_UPSTREAMS } from "../../src/relay/subscriptions";
import { agreedOf } from "../../src/relay/upstream-listen";
import { FLOOD_EVENT_BYTES, type FloodStats } from "../fixtures/flood-upstream";
import { admin, authVars, expectNoSuchUpstream, makeKey } from "../helpers/auth";
import { admin as shapingAdmin, ADMIN_VARS } from "../helpers/admin";
import { answer, post, type Json, type Vars } from "../helpers/gateway";

const MODERN = "2026-07-28";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const { alpha } = inject("fixtureUrls");

type Options = { client: string; vars?: Vars; headers?: Record<string, string> };

/** A modern POST as an SDK v2 client sends it: `_meta` envelope and mirrored headers. */
function modernPost(
  path: string,
  method: string,
  params: Record<string, unknown>,
  options: Options,
  id: number | string,
): Promise<Response> {
  // Capabilities of its own: upstream sessions are kept per capability set, so each test client has its own at alpha, named after it.
  const capabilities = { experimental: { listenTest: { client: options.client } } };
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: options.client, version: "2" },
  };
  const name: Record<string, string> = typeof params["name"] === "string" ? { "mcp-name": params["name"] } : {};
  const headers: Record<string, string> = {
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...name,
    ...options.headers,
  };
  return post(
    path,
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: { ...params, _meta: { ...(params["_meta"] as object | undefined), ...meta } },
    }),
    { headers, vars: options.vars },
  );
}

let nextId = 1;

/** Calls an alpha tool as the same modern client (on /mcp/alpha: the route does not matter to alpha). */
async function callAlpha(tool: string, args: Record<string, unknown>, options: Options): Promise<Json> {
  return answer(await modernPost("/mcp/alpha", "tools/call", { name: tool, arguments: args }, options, nextId++));
}

/** What alpha saw of this client name: open GET streams, subscribed URIs, cancelled requests, closed sessions. */
async function stats(
  options: Options,
): Promise<{ openStreams: number; subscribed: string[]; cancelled: unknown[]; closedSessions: number }> {
  return JSON.parse((await callAlpha("listen_stats", { client: options.client }, options)).result.content[0].text);
}

type Listening = {
  response: Response;
  events: AsyncGenerator<SseEvent>;
  next: () => Promise<Json>;
  close: () => Promise<void>;
};

async function listen(
  path: string,
  notifications: Record<string, unknown>,
  options: Options,
  id: number | string = `listen:${nextId++}`,
): Promise<Listening> {
  const response = await modernPost(path, "subscriptions/listen", { notifications }, options, id);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const events = readSse(response.body!);
  return {
    response,
    events,
    next: async () => {
      const item = await events.next();
      if (item.done) throw new Error("the listen stream ended");
      return JSON.parse(item.value.data);
    },
    close: async () => void (await events.return(undefined)),
  };
}

const client = (label: string): Options => ({ client: `${label}-${crypto.randomUUID()}` });

describe("subscriptions/listen", () => {
  it.each([
    ["/mcp/alpha", "add_tool"],
    ["/mcp", "alpha___add_tool"],
  ])(
    "on %s: the acknowledgement first, then an upstream's list_changed with the subscription id",
    async (path, tool) => {
      const options = client("listen");
      const listening = await listen(path, { toolsListChanged: true, promptsListChanged: true }, options, "listen:7");
      const ack = await listening.next();
      expect(ack.method).toBe("notifications/subscriptions/acknowledged");
      expect(ack.params._meta[SUBSCRIPTION_ID]).toBe("listen:7");
      // alpha declares tools.listChanged and prompts.listChanged (SDK McpServer).
      expect(ack.params.notifications).toMatchObject({ toolsListChanged: true });
      const added = await answer(
        await modernPost(path, "tools/call", { name: tool, arguments: { name: `added_${nextId}` } }, options, nextId++),
      );
      expect(added.result.content[0].text).toMatch(/^added added_\d+ in [1-9]\d* sessions$/);
      const changed = await listening.next();
      expect(changed).toEqual({
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
        params: { _meta: { [SUBSCRIPTION_ID]: "listen:7" } },
      });
      await listening.close();
    },
  );

  it("delivers resource updates only for the URIs asked for, and no unasked notification type", async () => {
    const options = client("filter");
    const listening = await listen("/mcp/alpha", { resourceSubscriptions: ["alpha://items/1"] }, options, 11);
    const ack = await listening.next();
    expect(ack.params).toEqual({
      _meta: { [SUBSCRIPTION_ID]: 11 },
      notifications: { resourceSubscriptions: ["alpha://items/1"] },
    });
    expect((await stats(options)).subscribed).toEqual(["alpha://items/1"]);
    // alpha tells every subscribed session of every update, and its list_changed goes to every session of the client:
    // neither is asked for. Its stream keeps its order, so the next event shows both were dropped.
    // Both of this client's sessions at alpha are told: the one its calls use and the listen's own.
    expect((await callAlpha("add_tool", { name: "unasked" }, options)).result.content[0].text).toBe(
      "added unasked in 2 sessions",
    );
    await callAlpha("touch", {}, options);
    await callAlpha("touch", { uri: "alpha://items/1" }, options);
    expect(await listening.next()).toEqual({
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "alpha://items/1", _meta: { [SUBSCRIPTION_ID]: 11 } },
    });
    await listening.close();
  });

  it("on /mcp subscribes a URI at the upstream that serves it, and relays its update", async () => {
    const options = client("aggregated");
    const listening = await listen("/mcp", { resourceSubscriptions: ["alpha://info"] }, options);
    expect((await listening.next()).params.notifications).toEqual({ resourceSubscriptions: ["alpha://info"] });
    await callAlpha("touch", {}, options);
    const updated = await listening.next();
    expect(updated.method).toBe("notifications/resources/updated");
    expect(updated.params.uri).toBe("alpha://info");
    await listening.close();
  });

  it("on /mcp subscribes a URI only at the upstream known to serve it", async () => {
    // Two upstreams serving the same URIs: the first in UPSTREAMS serves alpha://info (as resources/read would find it).
    const vars = {
      UPSTREAMS: JSON.stringify([
        { name: "first", url: alpha },
        { name: "second", url: alpha },
      ]),
    };
    const options = { ...client("owner"), vars };
    const listed = await answer(await modernPost("/mcp", "resources/list", {}, options, nextId++));
    expect(listed.result.resources.map((r: Json) => r.uri)).toContain("alpha://info");
    const listening = await listen("/mcp", { resourceSubscriptions: ["alpha://info", "alpha://items/3"] }, options);
    expect((await listening.next()).params.notifications).toEqual({
      resourceSubscriptions: ["alpha://info", "alpha://items/3"],
    });
    // alpha://info at its owner only; alpha://items/3 (a template, listed by no one) at each upstream that supports subscriptions.
    expect((await stats({ client: options.client })).subscribed.sort()).toEqual([
      "alpha://info",
      "alpha://items/3",
      "alpha://items/3",
    ]);
    await listening.close();
  });

  it("closing the stream cancels the upstream's stream, undoes its subscriptions and ends its session", async () => {
    const options = client("close");
    const listening = await listen(
      "/mcp/alpha",
      { toolsListChanged: true, resourceSubscriptions: ["alpha://info", "alpha://items/2"] },
      options,
    );
    await listening.next();
    expect(await stats(options)).toMatchObject({ openStreams: 1, closedSessions: 0 });
    expect((await stats(options)).subscribed.sort()).toEqual(["alpha://info", "alpha://items/2"]);
    await listening.close();
    await vi.waitFor(
      async () => expect(await stats(options)).toMatchObject({ openStreams: 0, subscribed: [], closedSessions: 1 }),
      { timeout: 5_000, interval: 50 },
    );
  });

  it("holds at most MAX_LISTEN_UPSTREAMS upstream streams, and says which upstreams it left out", async () => {
    const options = {
      ...client("bounded"),
      vars: {
        UPSTREAMS: JSON.stringify(
          Array.from({ length: MAX_LISTEN_UPSTREAMS + 1 }, (_, i) => ({ name: `a${i}`, url: alpha })),
        ),
      },
    };
    const listening = await listen("/mcp", { toolsListChanged: true }, options);
    const ack = await listening.next();
    expect(ack.params._meta["mcp-edge-gateway/unavailable"]).toEqual([
      { upstream: `a${MAX_LISTEN_UPSTREAMS}`, error: expect.stringContaining(`at most ${MAX_LISTEN_UPSTREAMS}`) },
    ]);
    expect((await stats({ client: options.client })).openStreams).toBe(MAX_LISTEN_UPSTREAMS);
    await listening.close();
    await vi.waitFor(async () => expect((await stats({ client: options.client })).openStreams).toBe(0), {
      timeout: 5_000,
      interval: 50,
    });
  });

  it.each([
    ["no filter", undefined],
    ["a flag that is not a boolean", { toolsListChanged: "yes" }],
    [
      "too many URIs",
      { resourceSubscriptions: Array.from({ length: MAX_LISTEN_URIS + 1 }, (_, i) => `alpha://items/${i}`) },
    ],
  ])("refuses %s with -32602 before opening anything", async (_label, notifications) => {
    const options = client("invalid");
    const response = await modernPost(
      "/mcp/alpha",
      "subscriptions/listen",
      notifications === undefined ? {} : { notifications },
      options,
      3,
    );
    expect(((await answer(response)) as Json).error).toMatchObject({ code: -32602 });
    expect((await stats(options)).openStreams).toBe(0);
  });

  it("with nothing to listen to: the acknowledgement with an empty filter, then a graceful end", async () => {
    const options = client("nothing");
    const response = await modernPost(
      "/mcp/beta",
      "subscriptions/listen",
      { notifications: { resourceSubscriptions: ["beta://readme"] } },
      options,
      5,
    );
    const events: Json[] = [];
    for await (const event of readSse(response.body!)) events.push(JSON.parse(event.data));
    expect(events[0]).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: {} },
    });
    expect(events[1]).toEqual({
      jsonrpc: "2.0",
      id: 5,
      result: { _meta: { [SUBSCRIPTION_ID]: 5 }, resultType: "complete" },
    });
  });
});

describe("subscriptions/listen fed by a 2026-07-28 upstream's own listen", () => {
  const modernUrl = inject("modernUpstreamUrl");
  it.each([
    ["/mcp/modern", "touch", [{ name: "modern", url: modernUrl }]],
    [
      "/mcp",
      "modern___touch",
      [
        { name: "modern", url: modernUrl },
        { name: "alpha", url: alpha },
      ],
    ],
  ])(
    "on %s: acknowledged with what the upstream agreed to, and its list_changed stamped with this listen's id",
    async (path, tool, upstreams) => {
      const options = { ...client("listen-modern"), vars: { UPSTREAMS: JSON.stringify(upstreams) } };
      const listening = await listen(path, { toolsListChanged: true }, options, "listen:modern");
      const ack = await listening.next();
      expect(ack.method).toBe("notifications/subscriptions/acknowledged");
      expect(ack.params.notifications).toMatchObject({ toolsListChanged: true });
      const touched = await answer(
        await modernPost(path, "tools/call", { name: tool, arguments: {} }, options, nextId++),
      );
      expect(touched.result.content[0].text).toBe("touched");
      let changed: Json;
      do changed = await listening.next();
      while (changed.method !== "notifications/tools/list_changed");
      expect(changed.params._meta[SUBSCRIPTION_ID]).toBe("listen:modern");
      await listening.close();
    },
  );
});

describe("what a 2026-07-28 upstream's acknowledgement may agree to", () => {
  it.each([
    [
      "exactly what was asked",
      { toolsListChanged: true, resourceSubscriptions: ["a://1"] },
      { toolsListChanged: true, resourceSubscriptions: ["a://1"] },
    ],
    [
      "more flags than asked",
      { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
      { toolsListChanged: true },
    ],
    [
      "URIs never asked for",
      { toolsListChanged: true, resourceSubscriptions: ["a://1", "b://secret"] },
      { toolsListChanged: true, resourceSubscriptions: ["a://1"] },
    ],
    ["less than asked", { resourceSubscriptions: [] }, {}],
    ["nothing readable", "yes", {}],
  ])("%s: only what was asked and acknowledged", (_label, acknowledged, agreed) => {
    expect(agreedOf(acknowledged, { toolsListChanged: true, resourceSubscriptions: ["a://1"] })).toEqual(agreed);
  });
});

describe("subscriptions/listen and personas", () => {
  const VARS = authVars({ apiKeys: true });

  it("on /mcp/alpha, a caller whose personas do not reach alpha finds no such upstream, and alpha is not listened to", async () => {
    expect(
      (await admin("PUT", "/personas/beta-only", { roles: ["listen-beta-only"], allow: ["beta___*"] }, VARS)).status,
    ).toBe(200);
    const { headers } = await makeKey(
      { principal: `listener-${crypto.randomUUID()}`, roles: ["listen-beta-only"] },
      VARS,
    );
    const options = { ...client("persona"), vars: VARS, headers };
    await expectNoSuchUpstream(
      (path) => modernPost(path, "subscriptions/listen", { notifications: { toolsListChanged: true } }, options, 9),
      "alpha",
    );
    expect((await stats({ client: options.client })).openStreams).toBe(0);
  });

  it("on /mcp, a caller whose personas do not reach alpha hears nothing from it", async () => {
    expect(
      (await admin("PUT", "/personas/beta-only", { roles: ["listen-beta-only"], allow: ["beta___*"] }, VARS)).status,
    ).toBe(200);
    const { headers } = await makeKey(
      { principal: `listener-${crypto.randomUUID()}`, roles: ["listen-beta-only"] },
      VARS,
    );
    const options = { ...client("persona"), vars: VARS, headers };
    const response = await modernPost(
      "/mcp",
      "subscriptions/listen",
      { notifications: { toolsListChanged: true } },
      options,
      9,
    );
    const events: Json[] = [];
    for await (const event of readSse(response.body!)) events.push(JSON.parse(event.data));
    // alpha was never listened to: an empty acknowledgement, and the listen ends at once.
    expect(events[0].params.notifications).toEqual({});
    expect(events.at(-1)).toMatchObject({ id: 9, result: { resultType: "complete" } });
    expect((await stats({ client: options.client })).openStreams).toBe(0);
  });
});

describe("closing a modern request's response stream", () => {
  it.each([
    ["/mcp/alpha", "wait_for_cancel"],
    ["/mcp", "alpha___wait_for_cancel"],
  ])("on %s cancels the call at the 2025 upstream (notifications/cancelled)", async (path, tool) => {
    const options = client("cancel");
    const id = `call-${nextId++}`;
    const response = await modernPost(
      path,
      "tools/call",
      { name: tool, arguments: {}, _meta: { progressToken: "p1" } },
      options,
      id,
    );
    const events = readSse(response.body!);
    const progress = JSON.parse((await events.next()).value!.data);
    expect(progress.method).toBe("notifications/progress");
    // The upstream knows the call by the gateway's own id for it (forward.ts), never the client's.
    const upstreamId = progress.params.message as string;
    expect(upstreamId).toMatch(/^gw-req-/);
    await events.return(undefined);
    await vi.waitFor(async () => expect((await stats(options)).cancelled).toEqual([upstreamId]), {
      timeout: 5_000,
      interval: 50,
    });
  });
});

describe("a listener that stops reading", () => {
  const FLOOD_MB = 32;
  const FLOOD_EVENTS = (FLOOD_MB * 1024 * 1024) / FLOOD_EVENT_BYTES;
  /** Loopback socket buffers and the gateway's small buffer stay well under this; without backpressure all 32 MiB go. */
  const MAX_WRITTEN_WHILE_PAUSED_BYTES = 16 * 1024 * 1024;

  it("holds the upstream's stream back to its pace, then gets every notification", { timeout: 120_000 }, async () => {
    const key = `listen-bp-${crypto.randomUUID()}`;
    const vars = {
      UPSTREAMS: JSON.stringify([
        { name: "flood", url: `${inject("floodUrl")}?key=${key}&mb=${FLOOD_MB}&listChanged=1` },
      ]),
    };
    const listening = await listen("/mcp/flood", { toolsListChanged: true }, { ...client("paused"), vars }, "bp");
    expect((await listening.next()).params.notifications).toEqual({ toolsListChanged: true });
    // The flood fixture answers once its writes have waited 1 s in a row for the reader (or once it is done).
    const statsUrl = new URL("/stats", inject("floodUrl"));
    statsUrl.searchParams.set("key", key);
    const paused = (await (await fetch(statsUrl)).json()) as FloodStats;
    expect(paused.done).toBe(false);
    expect(paused.written).toBeLessThan(MAX_WRITTEN_WHILE_PAUSED_BYTES);
    const indexes: number[] = [];
    let last: Json;
    for (;;) {
      last = await listening.next();
      if (last.method !== "notifications/tools/list_changed") break;
      expect(last.params._meta[SUBSCRIPTION_ID]).toBe("bp");
      indexes.push(last.params.data.index);
    }
    expect(indexes).toEqual(Array.from({ length: FLOOD_EVENTS }, (_, i) => i));
    // The upstream ended its stream: the listen ends with an error saying to listen again.
    expect(last).toMatchObject({ id: "bp", error: { code: -32603, message: expect.stringContaining("listen again") } });
  });
});

describe("ttlMs now that list changes reach listeners", () => {
  const hints = (method: string, result: string) =>
    JSON.parse(completeResult(`{"jsonrpc":"2.0","id":1,"result":${result}}`, method, { authMethod: "none" })).result
      .ttlMs;

  it.each(["tools/list", "prompts/list", "resources/list", "resources/templates/list"])(
    "a complete %s page is fresh for LIST_TTL_MS",
    (method) => {
      expect(LIST_TTL_MS).toBeGreaterThan(0);
      expect(hints(method, "{}")).toBe(LIST_TTL_MS);
    },
  );

  it("a merged list that lacks an unavailable upstream promises nothing", () => {
    expect(
      hints(
        "tools/list",
        '{"tools":[],"_meta":{"mcp-edge-gateway/unavailable":[{"upstream":"down","error":"unreachable"}]}}',
      ),
    ).toBe(0);
  });

  it("a read and server/discover promise nothing; an upstream's shorter ttl is kept", () => {
    expect(hints("resources/read", '{"contents":[]}')).toBe(0);
    expect(hints("tools/list", '{"tools":[],"ttlMs":5000}')).toBe(5000);
  });

  it("through the gateway: tools/list of a live upstream carries LIST_TTL_MS", async () => {
    const listed = await answer(await modernPost("/mcp/alpha", "tools/list", {}, client("ttl"), 1));
    expect(listed.result.ttlMs).toBe(LIST_TTL_MS);
  });
});

describe("the subscription id on a notification", () => {
  const KEY = JSON.stringify(SUBSCRIPTION_ID);
  it.each([
    ["no params", '{"jsonrpc":"2.0","method":"m"}', `{"jsonrpc":"2.0","method":"m","params":{"_meta":{${KEY}:"s"}}}`],
    [
      "params without _meta",
      '{"jsonrpc":"2.0","method":"m","params":{"uri":"a://é"}}',
      `{"jsonrpc":"2.0","method":"m","params":{"uri":"a://é","_meta":{${KEY}:"s"}}}`,
    ],
    [
      "an empty _meta",
      '{"jsonrpc":"2.0","method":"m","params":{"_meta":{}}}',
      `{"jsonrpc":"2.0","method":"m","params":{"_meta":{${KEY}:"s"}}}`,
    ],
    [
      "another _meta key kept",
      '{"jsonrpc":"2.0","method":"m","params":{"_meta":{"x":1.50}}}',
      `{"jsonrpc":"2.0","method":"m","params":{"_meta":{"x":1.50,${KEY}:"s"}}}`,
    ],
    [
      "the upstream's own id replaced",
      `{"jsonrpc":"2.0","method":"m","params":{"_meta":{${KEY}:99}}}`,
      `{"jsonrpc":"2.0","method":"m","params":{"_meta":{${KEY}:"s"}}}`,
    ],
    [
      "a _meta that is not an object",
      '{"jsonrpc":"2.0","method":"m","params":{"_meta":null}}',
      `{"jsonrpc":"2.0","method":"m","params":{"_meta":{${KEY}:"s"}}}`,
    ],
  ])("%s: stamped, every other byte kept", (_label, text, expected) => {
    expect(withSubscriptionId(text, "s")).toBe(expected);
  });
});

describe("the gateway's own list changes", () => {
  it("an output-filter edit that changes what tools/list shows reaches a listener that asked for toolsListChanged", async () => {
    const options = { ...client("filter-edit"), vars: ADMIN_VARS };
    const listening = await listen("/mcp/alpha", { toolsListChanged: true }, options, "edits");
    expect((await listening.next()).params.notifications).toEqual({ toolsListChanged: true });
    const put = await shapingAdmin(
      "PUT",
      "/filter-sets/default",
      '{"tools":{"alpha___get_user":{"retain":["/userInfo/login"]}}}',
      { contentType: "application/json" },
    );
    try {
      expect(put.status).toBe(200);
      // Checked once a second (FILTER_CACHE_TTL_MS is 0 here); the test's timeout bounds the wait.
      expect(await listening.next()).toEqual({
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
        params: { _meta: { [SUBSCRIPTION_ID]: "edits" } },
      });
    } finally {
      await listening.close();
      await shapingAdmin("DELETE", "/filter-sets/default");
    }
  });
});

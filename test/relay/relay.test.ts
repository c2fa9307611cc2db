/**
 * The relay against real SDK upstreams: every method, notifications both ways,
 * server-to-client requests answered by a separate POST, the GET stream, and the
 * aggregated endpoint's naming, pagination and routing.
 */
import { env } from "cloudflare:workers";
import { inject, describe, expect, it } from "vitest";
import { readSse } from "../../src/core/sse";
import { gatewayFetch, initialize, messages, post, request, type Json } from "../helpers/gateway";

async function allTools(path: string, session: string): Promise<Json[]> {
  const tools: Json[] = [];
  let cursor: string | undefined;
  do {
    const page = await request(path, session, "tools/list", cursor ? { cursor } : undefined);
    tools.push(...page.result.tools);
    cursor = page.result.nextCursor;
  } while (cursor);
  return tools;
}

describe("aggregated tools", () => {
  it("prefixes names with the upstream and merges every upstream's pages", async () => {
    const { session } = await initialize();
    const first = await request("/mcp", session, "tools/list");
    const names: string[] = first.result.tools.map((t: Json) => t.name);
    expect(names).toEqual(expect.arrayContaining(["alpha___echo", "beta___echo", "raw___trap"]));
    expect(names).not.toContain("raw___second"); // the raw upstream's second page
    expect(typeof first.result.nextCursor).toBe("string");
    const all = (await allTools("/mcp", session)).map((t) => t.name);
    expect(all).toContain("raw___second");
    expect(new Set(all).size).toBe(all.length);
    for (const name of all) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("rejects a cursor it did not issue", async () => {
    const { session } = await initialize();
    const answer = await request("/mcp", session, "tools/list", { cursor: "not-ours!" });
    expect(answer.error.code).toBe(-32602);
  });

  it("routes a call by its prefix", async () => {
    const { session } = await initialize();
    const a = await request("/mcp", session, "tools/call", { name: "alpha___echo", arguments: { text: "hi" } });
    const b = await request("/mcp", session, "tools/call", { name: "beta___echo", arguments: { text: "hi" } });
    expect(a.result.content[0].text).toBe("alpha: hi");
    expect(b.result.content[0].text).toBe("beta: hi");
  });

  it("shortens long names deterministically and still routes them", async () => {
    const { session } = await initialize();
    const tools = await allTools("/mcp", session);
    const long = tools.find((t) => t.description === "A tool whose aggregated name needs shortening");
    expect(long.name).toHaveLength(64);
    expect(long.name.startsWith("beta___summarize_the_quarterly")).toBe(true);
    const again = (await allTools("/mcp", (await initialize()).session)).find((t) => t.name === long.name);
    expect(again).toBeDefined();
    const call = await request("/mcp", session, "tools/call", { name: long.name, arguments: {} });
    expect(call.result.content[0].text).toBe("long name reached");
  });

  it.each([["nope___echo"], ["echo"], ["alpha___"]])("answers -32602 for the unknown tool %s", async (name) => {
    const { session } = await initialize();
    const answer = await request("/mcp", session, "tools/call", { name, arguments: {} });
    expect(answer.error).toMatchObject({ code: -32602, message: `Unknown tool: ${name}` });
  });

  it("passes the client's capabilities to each upstream", async () => {
    const capabilities = { sampling: {}, roots: { listChanged: true }, elicitation: { form: {} } };
    const { session } = await initialize("/mcp", { capabilities });
    const seen = await request("/mcp", session, "tools/call", { name: "alpha___client_capabilities", arguments: {} });
    expect(JSON.parse(seen.result.content[0].text)).toEqual(capabilities);
    // alpha registers ask_llm only for clients that can sample.
    expect((await allTools("/mcp", session)).map((t) => t.name)).toContain("alpha___ask_llm");
    const plain = await initialize();
    expect((await allTools("/mcp", plain.session)).map((t) => t.name)).not.toContain("alpha___ask_llm");
  });
});

describe("transparent route /mcp/<upstream>", () => {
  it("relays the upstream's names and initialize result unchanged", async () => {
    const { session, result } = await initialize("/mcp/alpha");
    expect(result.serverInfo.name).toBe("alpha");
    expect(result.instructions).toBe("Alpha answers echo calls.");
    const names = (await allTools("/mcp/alpha", session)).map((t) => t.name);
    expect(names).toContain("echo");
    const call = await request("/mcp/alpha", session, "tools/call", { name: "echo", arguments: { text: "x" } });
    expect(call.result.content[0].text).toBe("alpha: x");
  });

  it("answers initialize with the upstream's failure when it is down", async () => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "down", url: "http://127.0.0.1:9/mcp", timeoutMs: 2000 }]) };
    const response = await post(
      "/mcp/down",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { vars },
    );
    const body = (await response.json()) as Json;
    expect(body.error.message).toMatch(/upstream "down" is unreachable/);
  });
});

describe("streaming", () => {
  it("streams progress and log notifications while the call runs", async () => {
    const { session } = await initialize();
    const response = await post(
      "/mcp",
      {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "alpha___count", arguments: { steps: 3 }, _meta: { progressToken: "tok" } },
      },
      { session },
    );
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    const all = await messages(response);
    const progress = all.filter((m) => m.method === "notifications/progress");
    expect(progress.map((m) => m.params.progress)).toEqual([1, 2, 3]);
    expect(progress.every((m) => m.params.progressToken === "tok")).toBe(true);
    expect(all.filter((m) => m.method === "notifications/message").map((m) => m.params.data)).toEqual([
      "step 1",
      "step 2",
      "step 3",
    ]);
    expect(all.at(-1)).toMatchObject({ id: 5, result: { content: [{ text: "counted to 3" }] } });
  });

  it.each([
    [
      "sampling/createMessage",
      "ask_llm",
      { sampling: {} },
      { question: "2+2?" },
      { role: "assistant", content: { type: "text", text: "four" }, model: "test-model" },
      "model said: four",
    ],
    [
      "elicitation/create",
      "ask_user",
      { elicitation: { form: {} } },
      {},
      { action: "accept", content: { name: "Ada" } },
      'accept: {"name":"Ada"}',
    ],
    ["roots/list", "list_roots", { roots: {} }, {}, { roots: [{ uri: "file:///work" }] }, "file:///work"],
  ])(
    "relays %s to the client and routes its answer back",
    async (method, tool, capabilities, args, clientResult, expected) => {
      for (const path of ["/mcp", "/mcp/alpha"]) {
        const { session } = await initialize(path, { capabilities });
        const name = path === "/mcp" ? `alpha___${tool}` : tool;
        const response = await post(
          path,
          { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name, arguments: args } },
          { session },
        );
        const events = readSse(response.body!);
        const first = JSON.parse((await events.next()).value!.data) as Json;
        expect(first.method).toBe(method);
        if (path === "/mcp") expect(first.id).toMatch(/^gw\./);
        // The answer is a separate POST, as a client sends it.
        const answered = await post(path, { jsonrpc: "2.0", id: first.id, result: clientResult }, { session });
        expect(answered.status).toBe(202);
        let final: Json;
        for await (const event of events) final = JSON.parse(event.data);
        expect(final).toMatchObject({ id: 9, result: { content: [{ text: expected }] } });
      }
    },
  );
});

describe("resources, prompts, completion, logging", () => {
  it("merges resources and routes reads by URI", async () => {
    const { session } = await initialize();
    const list = await request("/mcp", session, "resources/list");
    expect(list.result.resources.map((r: Json) => r.uri)).toEqual(
      expect.arrayContaining(["alpha://info", "beta://readme"]),
    );
    const templates = await request("/mcp", session, "resources/templates/list");
    expect(templates.result.resourceTemplates.map((t: Json) => t.uriTemplate)).toContain("alpha://items/{id}");
    expect((await request("/mcp", session, "resources/read", { uri: "beta://readme" })).result.contents[0].text).toBe(
      "beta readme",
    );
    // Not listed anywhere (a template): found by asking the upstreams.
    expect(
      (await request("/mcp", session, "resources/read", { uri: "alpha://items/42" })).result.contents[0].text,
    ).toBe("item 42");
    const missing = await request("/mcp", session, "resources/read", { uri: "nowhere://x" });
    expect(missing.error).toBeDefined();
  });

  it("prefixes prompts, gets them and completes their arguments", async () => {
    const { session } = await initialize();
    const list = await request("/mcp", session, "prompts/list");
    expect(list.result.prompts.map((p: Json) => p.name)).toEqual(
      expect.arrayContaining(["alpha___greet", "beta___haiku"]),
    );
    const got = await request("/mcp", session, "prompts/get", { name: "alpha___greet", arguments: { name: "Ada" } });
    expect(got.result.messages[0].content.text).toBe("Hello, Ada!");
    const completion = await request("/mcp", session, "completion/complete", {
      ref: { type: "ref/prompt", name: "alpha___greet" },
      argument: { name: "name", value: "A" },
    });
    expect(completion.result.completion.values).toEqual(["Ada", "Alan"]);
  });

  it("sets the log level on every upstream that logs", async () => {
    const { session } = await initialize();
    expect((await request("/mcp", session, "logging/setLevel", { level: "warning" })).result).toEqual({});
    // alpha now drops info-level messages.
    const response = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "alpha___count", arguments: { steps: 2 } } },
      { session },
    );
    expect((await messages(response)).filter((m) => m.method === "notifications/message")).toEqual([]);
  });

  it("answers ping itself and -32601 for unknown methods", async () => {
    const { session } = await initialize();
    expect((await request("/mcp", session, "ping")).result).toEqual({});
    expect((await request("/mcp", session, "no/such/method")).error.code).toBe(-32601);
  });
});

describe("the server stream (GET)", () => {
  it("delivers resource updates and list_changed from upstreams", async () => {
    const { session } = await initialize();
    expect((await request("/mcp", session, "resources/subscribe", { uri: "alpha://info" })).result).toEqual({});
    const stream = await gatewayFetch("/mcp", {
      headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    });
    expect(stream.status).toBe(200);
    const events = readSse(stream.body!);
    await request("/mcp", session, "tools/call", { name: "alpha___touch", arguments: {} });
    const seen: string[] = [];
    while (seen.length < 2) {
      const message = JSON.parse((await events.next()).value!.data) as Json;
      seen.push(
        message.method === "notifications/resources/updated"
          ? `${message.method} ${message.params.uri}`
          : message.method,
      );
    }
    expect(seen.sort()).toEqual(["notifications/resources/updated alpha://info", "notifications/tools/list_changed"]);
    await events.return(undefined);
  });

  /** Opens the GET stream of `session` on /mcp/alpha and waits there for the list change a `touch` call makes. */
  async function streamCarriesListChange(session: string): Promise<void> {
    const stream = await gatewayFetch("/mcp/alpha", {
      headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    });
    expect(stream.status).toBe(200);
    const events = readSse(stream.body!);
    await request("/mcp/alpha", session, "tools/call", { name: "touch", arguments: {} });
    let method: string | undefined;
    while (method !== "notifications/tools/list_changed")
      method = (JSON.parse((await events.next()).value!.data) as Json).method;
    await events.return(undefined);
  }

  it("opens in the session the pool holds now, when the upstream forgot the one the client connected with", async () => {
    const { session } = await initialize("/mcp/alpha");
    await request("/mcp/alpha", session, "tools/call", { name: "forget_session", arguments: {} });
    // The next call finds the session forgotten, and the pool opens a new one.
    expect(
      (await request("/mcp/alpha", session, "tools/call", { name: "echo", arguments: { text: "again" } })).result
        .content[0].text,
    ).toBe("alpha: again");
    await streamCarriesListChange(session);
  });

  it("opens in a new session when the upstream forgot the client's, as a call would", async () => {
    const { session } = await initialize("/mcp/alpha");
    await request("/mcp/alpha", session, "tools/call", { name: "forget_session", arguments: {} });
    await streamCarriesListChange(session);
  });

  it("keeps the client's upstream session when the upstream answers its GET with 400: only a 404 says the session is gone", async () => {
    const { raw } = inject("fixtureUrls");
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw400", url: `${new URL(raw).origin}/sessions-get400/` }]) };
    const handshakes = async (session: string) =>
      Number(
        (
          await request(
            "/mcp/raw400",
            session,
            "tools/call",
            { name: "initializes", arguments: { client: "(sessions-get400)" } },
            { vars },
          )
        ).result.content[0].text,
      );
    const { session } = await initialize("/mcp/raw400", { vars });
    const before = await handshakes(session);
    expect(before).toBeGreaterThan(0);
    for (let i = 0; i < 2; i++) {
      const stream = await gatewayFetch(
        "/mcp/raw400",
        { headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } },
        vars,
      );
      await stream.body?.cancel();
    }
    // Taking each 400 as a forgotten session made a new handshake per GET.
    expect(await handshakes(session)).toBe(before);
  });

  it("answers 405 when no upstream offers a stream", async () => {
    const { session } = await initialize("/mcp/beta");
    const stream = await gatewayFetch("/mcp/beta", {
      headers: { accept: "text/event-stream", "mcp-session-id": session },
    });
    expect(stream.status).toBe(405);
  });
});

describe("failing upstreams", () => {
  it("starts a new upstream session, transparently, when the upstream forgot the old one", async () => {
    const { session } = await initialize();
    await request("/mcp", session, "tools/call", { name: "alpha___forget_session", arguments: {} });
    // Other files' sessions share this KV (more than one page of them): count alpha's, every page.
    const alphaSessions = async () => {
      const names: string[] = [];
      for (let cursor: string | undefined, done = false; !done; ) {
        const page = await env.GATEWAY_KV.list({ prefix: "upstream-session/", ...(cursor ? { cursor } : {}) });
        names.push(...page.keys.map((k) => k.name).filter((name) => name.endsWith("/alpha")));
        done = page.list_complete;
        cursor = page.list_complete ? undefined : page.cursor;
      }
      return names;
    };
    const before = new Set(await alphaSessions());
    const after = await request("/mcp", session, "tools/call", { name: "alpha___echo", arguments: { text: "again" } });
    expect(after.result.content[0].text).toBe("alpha: again");
    // The new upstream session is in KV, where any isolate finds it (and DELETE closes it).
    const added = (await alphaSessions()).filter((name) => !before.has(name));
    expect(added).toHaveLength(1);
    const value = JSON.parse((await env.GATEWAY_KV.get(added[0]!))!) as { sessionId: string };
    expect(value.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  const { alpha } = inject("fixtureUrls");

  it("keeps the others working when one is down", async () => {
    const vars = {
      UPSTREAMS: JSON.stringify([
        { name: "alpha", url: alpha },
        { name: "down", url: "http://127.0.0.1:9/mcp", timeoutMs: 2000 },
      ]),
    };
    const { session } = await initialize("/mcp", { vars });
    const list = await request("/mcp", session, "tools/list", undefined, { vars });
    expect(list.result.tools.map((t: Json) => t.name)).toContain("alpha___echo");
    expect(list.result._meta["mcp-edge-gateway/unavailable"][0]).toMatchObject({ upstream: "down" });
    const call = await request("/mcp", session, "tools/call", { name: "down___anything", arguments: {} }, { vars });
    expect(call.error).toMatchObject({ code: -32010, data: { upstream: "down", reason: "unreachable" } });
    expect(call.error.message).toMatch(/upstream "down" is unreachable/);
    const ok = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "alpha___echo", arguments: { text: "still" } },
      { vars },
    );
    expect(ok.result.content[0].text).toBe("alpha: still");
  });

  it("gives up on a slow upstream after its timeout", async () => {
    const { raw } = inject("fixtureUrls");
    const vars = {
      UPSTREAMS: JSON.stringify([
        { name: "raw", url: raw, timeoutMs: 300 },
        { name: "alpha", url: alpha },
      ]),
    };
    const { session } = await initialize("/mcp", { vars });
    const call = await request("/mcp", session, "tools/call", { name: "raw___slow", arguments: {} }, { vars });
    expect(call.error).toMatchObject({ code: -32010, data: { upstream: "raw", reason: "timeout" } });
    expect(call.error.message).toMatch(/did not answer within 300 ms/);
    const ok = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "alpha___echo", arguments: { text: "fast" } },
      { vars },
    );
    expect(ok.result.content[0].text).toBe("alpha: fast");
  });
});

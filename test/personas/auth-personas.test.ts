/**
 * Personas and visibility through the Worker, on both routes: what each caller lists and
 * may call (deny wins, several personas unite, default persona, default deny), prompts,
 * resource templates and reads, the persona on the call record; and the visibility
 * matrix of the reference middleware, keeping each listed tool's bytes.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/gateway";
import type { CallRecord } from "../../src/context/call-record";
import { elements, member, parseSpan, pathSpan } from "../../src/core/raw-json";
import { admin, authVars, expectNoSuchUpstream, makeKey } from "../helpers/auth";
import {
  gatewayFetch,
  initialize,
  LATEST,
  messageTexts,
  post,
  request,
  type GatewayTarget,
  type Json,
} from "../helpers/gateway";

const VARS = authVars({ apiKeys: true });
const PERSONAS = {
  analyst: { roles: ["p-analyst"], allow: ["alpha___*"], deny: ["alpha___big_*"] },
  echoer: { roles: ["p-echoer"], allow: ["beta___echo", "alpha___big_list", "beta___haiku"] },
  betaonly: { roles: ["p-betaonly"], allow: ["beta___*"] },
};

async function callerWith(
  roles: string[],
): Promise<{ headers: Record<string, string>; open: (path: string) => Promise<string> }> {
  const { headers } = await makeKey({ principal: `p-${roles.join("-") || "none"}`, roles }, VARS);
  return { headers, open: async (path) => (await initialize(path, { vars: VARS, headers })).session };
}

async function toolNames(path: string, roles: string[]): Promise<string[]> {
  const caller = await callerWith(roles);
  const listed = await request(path, await caller.open(path), "tools/list", undefined, {
    vars: VARS,
    headers: caller.headers,
  });
  return listed.result.tools.map((t: Json) => t.name).sort();
}

async function call(path: string, roles: string[], name: string): Promise<Json> {
  const caller = await callerWith(roles);
  return request(
    path,
    await caller.open(path),
    "tools/call",
    { name, arguments: { text: "hi", count: 1 } },
    { vars: VARS, headers: caller.headers },
  );
}

beforeAll(async () => {
  for (const [name, persona] of Object.entries(PERSONAS))
    expect((await admin("PUT", `/personas/${name}`, persona, VARS)).status).toBe(200);
});
afterEach(async () => {
  await admin("DELETE", "/personas/guest", undefined, VARS);
  await admin("DELETE", "/visibility", undefined, VARS);
});

describe("the persona matrix", () => {
  it.each([
    ["/mcp", ["p-analyst"], ["alpha___add", "alpha___echo", "alpha___get_user"], ["alpha___big_list", "beta___echo"]],
    ["/mcp", ["p-echoer"], ["alpha___big_list", "beta___echo"], ["alpha___add", "alpha___echo"]],
    // Several personas: the union of allows minus the union of denies (analyst's deny takes echoer's big_list).
    [
      "/mcp",
      ["p-analyst", "p-echoer"],
      ["alpha___echo", "beta___echo"],
      ["alpha___big_list", "alpha___big_structured"],
    ],
    ["/mcp/alpha", ["p-analyst"], ["add", "echo", "get_user"], ["big_list"]],
    ["/mcp/beta", ["p-echoer"], ["echo"], []],
  ])("%s with roles %j lists %j and not %j", async (path, roles, shown, hidden) => {
    const names = await toolNames(path, roles);
    for (const name of shown) expect(names).toContain(name);
    for (const name of hidden) expect(names).not.toContain(name);
  });

  it.each([
    ["/mcp", ["p-analyst"], "alpha___echo", true],
    ["/mcp", ["p-analyst"], "alpha___big_list", false],
    ["/mcp", ["p-analyst"], "beta___echo", false],
    ["/mcp", ["p-analyst", "p-echoer"], "beta___echo", true],
    ["/mcp", ["p-analyst", "p-echoer"], "alpha___big_list", false],
    ["/mcp/alpha", ["p-analyst"], "echo", true],
    ["/mcp/alpha", ["p-analyst"], "big_list", false],
    ["/mcp/beta", ["p-echoer"], "echo", true],
  ])("%s with roles %j calls %s: allowed %s", async (path, roles, name, allowed) => {
    const answer = await call(path, roles, name);
    if (allowed) expect(answer.result.isError).toBeFalsy();
    else expect(answer.error).toEqual({ code: -32602, message: `Unknown tool: ${name}` });
  });

  it("answers /mcp/<upstream> of an upstream no persona of the caller reaches as an unknown upstream: no session, no list, no call", async () => {
    const { headers } = await makeKey({ principal: "p-analyst-beta", roles: ["p-analyst"] }, VARS);
    const options = { vars: VARS, headers };
    await expectNoSuchUpstream(
      (path) =>
        post(
          path,
          {
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "t", version: "1" } },
          },
          options,
        ),
      "beta",
      "initialize",
    );
    await expectNoSuchUpstream(
      (path) => post(path, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...options, session: "made-up" }),
      "beta",
      "tools/list",
    );
    await expectNoSuchUpstream(
      (path) =>
        post(
          path,
          { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } },
          { ...options, session: "made-up" },
        ),
      "beta",
      "tools/call",
    );
  });

  it("refuses a denied tool and a tool that does not exist alike", async () => {
    const denied = await call("/mcp", ["p-analyst"], "beta___echo");
    const missing = await call("/mcp", ["p-analyst"], "beta___no_such_tool");
    expect(missing.error.message.replace("no_such_tool", "X")).toBe(denied.error.message.replace("echo", "X"));
    expect(missing.error.code).toBe(denied.error.code);
  });

  it("denies everything to roles no persona names, without a default", async () => {
    expect(await toolNames("/mcp", ["p-nobody"])).toEqual(["sys___read_payload"]);
    expect((await call("/mcp", ["p-nobody"], "alpha___echo")).error.message).toBe("Unknown tool: alpha___echo");
  });

  it("gives the default persona to roles no persona names", async () => {
    expect(
      (await admin("PUT", "/personas/guest", { roles: [], allow: ["alpha___echo"], default: true }, VARS)).status,
    ).toBe(200);
    expect(await toolNames("/mcp", ["p-nobody"])).toEqual(["alpha___echo", "sys___read_payload"]);
    // A caller some persona names does not also get the default.
    expect(await toolNames("/mcp", ["p-echoer"])).not.toContain("alpha___echo");
    const second = await admin("PUT", "/personas/guest2", { roles: [], allow: ["*"], default: true }, VARS);
    expect(second.status).toBe(400);
  });

  it("applies to prompts, resource templates and reads", async () => {
    const analyst = await callerWith(["p-analyst"]);
    const session = await analyst.open("/mcp");
    const options = { vars: VARS, headers: analyst.headers };
    const prompts = await request("/mcp", session, "prompts/list", undefined, options);
    expect(prompts.result.prompts.map((p: Json) => p.name)).toEqual(["alpha___greet"]);
    expect((await request("/mcp", session, "prompts/get", { name: "beta___haiku" }, options)).error.message).toBe(
      "Unknown prompt: beta___haiku",
    );
    expect(
      (await request("/mcp", session, "prompts/get", { name: "alpha___greet", arguments: { name: "Ada" } }, options))
        .result.messages,
    ).toHaveLength(1);
    expect(
      (await request("/mcp", session, "resources/read", { uri: "alpha://info" }, options)).result.contents[0].text,
    ).toBe("alpha info");
    // beta is never asked: the denied read answers as a read of a URI nothing serves does.
    const denied = await request("/mcp", session, "resources/read", { uri: "beta://readme" }, options);
    const missing = await request("/mcp", session, "resources/read", { uri: "beta://no-such-resource" }, options);
    expect(denied.result).toBeUndefined();
    expect(denied.error.code).toBe(missing.error.code);
    // On /mcp/beta, which the analyst does not reach, there is no beta at all.
    await expectNoSuchUpstream(
      (path) =>
        post(
          path,
          { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "beta://readme" } },
          { ...options, session: "made-up" },
        ),
      "beta",
      "resources/read",
    );
    await expectNoSuchUpstream(
      (path) => post(path, { jsonrpc: "2.0", id: 2, method: "resources/list" }, { ...options, session: "made-up" }),
      "beta",
      "resources/list",
    );
    const onAlphaAnalyst = await analyst.open("/mcp/alpha");
    expect(
      (await request("/mcp/alpha", onAlphaAnalyst, "resources/list", undefined, options)).result.resources.map(
        (r: Json) => r.uri,
      ),
    ).toContain("alpha://info");
    const echoer = await callerWith(["p-echoer"]);
    const onAlpha = await echoer.open("/mcp/alpha");
    const templates = await request("/mcp/alpha", onAlpha, "resources/templates/list", undefined, {
      vars: VARS,
      headers: echoer.headers,
    });
    expect(templates.result.resourceTemplates.map((t: Json) => t.name)).not.toContain("item");
    const analystAlpha = await analyst.open("/mcp/alpha");
    const shown = await request("/mcp/alpha", analystAlpha, "resources/templates/list", undefined, options);
    expect(shown.result.resourceTemplates.map((t: Json) => t.name)).toContain("item");
  });

  it("lists on /mcp only the resources and templates of upstreams the persona reaches", async () => {
    const analyst = await callerWith(["p-analyst"]);
    const session = await analyst.open("/mcp");
    const options = { vars: VARS, headers: analyst.headers };
    const resources = (await request("/mcp", session, "resources/list", undefined, options)).result.resources.map(
      (r: Json) => r.uri,
    );
    expect(resources).toContain("alpha://info");
    expect(resources).not.toContain("beta://readme");
    const templates = (
      await request("/mcp", session, "resources/templates/list", undefined, options)
    ).result.resourceTemplates.map((t: Json) => t.name);
    expect(templates).toContain("item");
    const echoer = await callerWith(["p-echoer"]);
    const echoerSession = await echoer.open("/mcp");
    const echoerOptions = { vars: VARS, headers: echoer.headers };
    // The echoer reaches both upstreams (a tool of each): both lists show both.
    const both = (
      await request("/mcp", echoerSession, "resources/list", undefined, echoerOptions)
    ).result.resources.map((r: Json) => r.uri);
    expect(both).toEqual(expect.arrayContaining(["alpha://info", "beta://readme"]));
  });

  it("refuses subscriptions and resource completions of an upstream the persona does not reach", async () => {
    const echoerOnly = await callerWith(["p-betaonly"]);
    await admin("PUT", "/personas/betaonly", { roles: ["p-betaonly"], allow: ["beta___*"] }, VARS);
    const options = { vars: VARS, headers: echoerOnly.headers };
    // On /mcp/alpha there is no alpha for it at all.
    await expectNoSuchUpstream(
      (path) =>
        post(
          path,
          { jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "alpha://info" } },
          { ...options, session: "made-up" },
        ),
      "alpha",
      "resources/subscribe",
    );
    await expectNoSuchUpstream(
      (path) =>
        post(
          path,
          {
            jsonrpc: "2.0",
            id: 2,
            method: "completion/complete",
            params: { ref: { type: "ref/resource", uri: "alpha://items/{id}" }, argument: { name: "id", value: "1" } },
          },
          { ...options, session: "made-up" },
        ),
      "alpha",
      "completion/complete",
    );
    // On /mcp alpha is never asked (it would subscribe and answer {}): only beta is, which does not serve the URI.
    const aggregated = await echoerOnly.open("/mcp");
    const subscribed = await request("/mcp", aggregated, "resources/subscribe", { uri: "alpha://info" }, options);
    expect(subscribed.result).toBeUndefined();
    expect(subscribed.error).toBeDefined();
    await admin("DELETE", "/personas/betaonly", undefined, VARS);
  });

  it("always allows the gateway's own read tool, on both routes", async () => {
    const caller = await callerWith(["p-echoer"]);
    const options = { vars: VARS, headers: caller.headers };
    for (const path of ["/mcp", "/mcp/alpha"]) {
      const session = await caller.open(path);
      const answer = await request(
        path,
        session,
        "tools/call",
        { name: "sys___read_payload", arguments: { id: "0".repeat(32) } },
        options,
      );
      // Reaches the tool (which finds no such payload), instead of "Unknown tool".
      expect(answer.result?.isError).toBe(true);
      expect(JSON.stringify(answer)).not.toContain("Unknown tool");
    }
  });

  it("puts the persona on the call record", async () => {
    const records: CallRecord[] = [];
    const target = createApp({ observers: [(record) => records.push({ ...record })] }) as unknown as GatewayTarget;
    const { headers } = await makeKey({ principal: "recorded", roles: ["p-analyst", "p-echoer"] }, VARS);
    const { session } = await initialize("/mcp", { vars: VARS, headers, target });
    await request(
      "/mcp",
      session,
      "tools/call",
      { name: "beta___echo", arguments: { text: "x" } },
      { vars: VARS, headers, target },
    );
    expect(records.at(-1)!.persona).toBe("analyst+echoer");
  });
});

describe("the visibility matrix (reference semantics)", () => {
  const OPEN = { AUTH: '{"mode":"off"}' };
  const ALPHA = ["add", "big_list", "big_structured", "echo", "get_user"];

  async function visible(path: string, document: unknown): Promise<string[]> {
    if (document !== undefined) expect((await admin("PUT", "/visibility", document, VARS)).status).toBe(200);
    const { session } = await initialize(path, { vars: OPEN });
    return (await request(path, session, "tools/list", undefined, { vars: OPEN })).result.tools.map(
      (t: Json) => t.name,
    );
  }

  it.each([
    ["no document", undefined, (name: string) => ALPHA.includes(name)],
    ["no patterns", { allow: [], deny: [] }, (name: string) => ALPHA.includes(name)],
    ["allow only", { allow: ["alpha___get_*", "alpha___echo"] }, (name: string) => ["get_user", "echo"].includes(name)],
    ["deny only", { deny: ["alpha___big_*"] }, (name: string) => ALPHA.includes(name) && !name.startsWith("big_")],
    [
      "both: allow, then deny",
      { allow: ["alpha___*"], deny: ["*___big_*", "alpha___add"] },
      (name: string) => ["echo", "get_user"].includes(name),
    ],
  ])("%s", async (_, document, expected) => {
    const names = await visible("/mcp/alpha", document);
    for (const name of ALPHA) expect(names.includes(name)).toBe(expected(name));
  });

  it("trims the aggregated list too, and hides without refusing calls", async () => {
    const names = await visible("/mcp", { allow: ["beta___*"] });
    expect(names.some((name) => name.startsWith("alpha___"))).toBe(false);
    expect(names).toContain("beta___echo");
    const { session } = await initialize("/mcp", { vars: OPEN });
    const answer = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "alpha___echo", arguments: { text: "still" } },
      { vars: OPEN },
    );
    expect(answer.result.content[0].text).toBe("alpha: still");
  });

  it("keeps every listed tool's bytes", async () => {
    const list = async () => {
      const { session } = await initialize("/mcp/raw", { vars: OPEN });
      const response = await post("/mcp/raw", { jsonrpc: "2.0", id: 7, method: "tools/list" }, { session, vars: OPEN });
      return (await messageTexts(response)).at(-1)!;
    };
    const whole = await list();
    const items = elements(whole, pathSpan(whole, ["result", "tools"])!).map((span) => ({
      text: whole.slice(span.start, span.end),
      name: parseSpan(whole, member(whole, span, "name")!) as string,
    }));
    expect(items.length).toBeGreaterThan(1);
    expect((await admin("PUT", "/visibility", { deny: [`raw___${items[0]!.name}`] }, VARS)).status).toBe(200);
    const trimmed = await list();
    expect(trimmed).not.toContain(items[0]!.text);
    for (const item of items.slice(1)) expect(trimmed).toContain(item.text);
  });

  it("refuses an invalid document", async () => {
    const response = await admin("PUT", "/visibility", { allow: "alpha___*", hide: [] }, VARS);
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).problems.map((p: Json) => p.path).sort()).toEqual(["/allow", "/hide"]);
  });
});

describe("a 2025 client's GET stream", () => {
  /** Opens a session named `client` (alpha counts GET streams per client name) and its GET stream on /mcp. */
  async function openStream(roles: string[], client: string): Promise<Response> {
    const { headers } = await makeKey({ principal: `stream-${client}`, roles }, VARS);
    const init = await post(
      "/mcp",
      {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: client, version: "1" } },
      },
      { vars: VARS, headers },
    );
    const session = init.headers.get("mcp-session-id")!;
    await post("/mcp", { jsonrpc: "2.0", method: "notifications/initialized" }, { session, vars: VARS, headers });
    return gatewayFetch(
      "/mcp",
      {
        method: "GET",
        headers: { ...headers, accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": LATEST },
      },
      VARS,
    );
  }

  async function alphaStreams(client: string): Promise<number> {
    const caller = await callerWith(["p-analyst"]);
    const stats = await request(
      "/mcp",
      await caller.open("/mcp"),
      "tools/call",
      { name: "alpha___listen_stats", arguments: { client } },
      { vars: VARS, headers: caller.headers },
    );
    return (JSON.parse(stats.result.content[0].text) as { openStreams: number }).openStreams;
  }

  it("listens only to the upstreams the caller's personas reach", async () => {
    const allowed = `stream-allowed-${crypto.randomUUID()}`;
    const seen = await openStream(["p-analyst"], allowed);
    expect(seen.status).toBe(200);
    expect(await alphaStreams(allowed)).toBe(1);
    await seen.body?.cancel();

    const denied = `stream-denied-${crypto.randomUUID()}`;
    const other = await openStream(["p-betaonly"], denied);
    // beta keeps no sessions, so it has no stream: with alpha out of reach there is nothing to listen to.
    expect(other.status).toBe(405);
    expect(await alphaStreams(denied)).toBe(0);
    await other.body?.cancel();
  });
});

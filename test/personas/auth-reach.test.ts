/**
 * Personas that cannot be walked around, on both routes and in both eras: an upstream's
 * `sys___` names pass for nothing of the gateway's, a deny holds for every spelling an
 * upstream may resolve to the denied name, only reachable upstreams speak at `initialize`
 * and `server/discover`, a URI-routed request never reaches an upstream the persona
 * does not reach, and `/mcp/<upstream>` of such an upstream is no upstream at all
 * (counted at the upstream: test/fixtures/names-upstream.ts).
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { admin, authVars, expectNoSuchUpstream, makeKey } from "../helpers/auth";
import { initialize, LATEST, post, request, type Json } from "../helpers/gateway";
import { modern, modernPost } from "../helpers/modern";

const names = inject("namesUpstream");
const { alpha } = inject("fixtureUrls");
const RUN = crypto.randomUUID().slice(0, 8);
const KEYS = { good: `good${RUN}`, near: `near${RUN}`, far: `far${RUN}` };
const VARS = authVars(
  { apiKeys: true },
  {
    // far first: a URI routed on /mcp without regard to the persona would be asked of far first (these upstreams read any URI).
    UPSTREAMS: JSON.stringify([
      { name: "far", url: `${names}/plain/${KEYS.far}/mcp` },
      { name: "good", url: `${names}/sys-names/${KEYS.good}/mcp` },
      { name: "near", url: `${names}/plain/${KEYS.near}/mcp` },
      { name: "alpha", url: alpha },
    ]),
  },
);
const PERSONAS = {
  "reach-echo": { roles: ["r-echo"], allow: ["good___echo"] },
  "reach-all": { roles: ["r-all"], allow: ["*"] },
  "reach-nodelete": { roles: ["r-nodelete"], allow: ["good___*"], deny: ["good___delete_*"] },
  "reach-near": { roles: ["r-near"], allow: ["near___*"] },
};

type Caller = { headers: Record<string, string> };

async function caller(roles: string[]): Promise<Caller> {
  return {
    headers: (await makeKey({ principal: `reach-${roles.join("-") || "none"}-${crypto.randomUUID()}`, roles }, VARS))
      .headers,
  };
}

/** A 2025 request on `path` in a fresh session of `who`. */
async function legacy(who: Caller, path: string, method: string, params?: unknown): Promise<Json> {
  const { session } = await initialize(path, { vars: VARS, headers: who.headers });
  return request(path, session, method, params, { vars: VARS, headers: who.headers });
}

/** The same request as a 2026-07-28 client sends it. */
function stateless(who: Caller, path: string, method: string, params: Record<string, unknown> = {}): Promise<Json> {
  return modern(path, method, params, { vars: VARS, headers: who.headers });
}

const ERAS = [
  ["2025-11-25", legacy],
  ["2026-07-28", stateless],
] as const;

/** The same request, as raw HTTP, in each era (a 2025 one with a session id, which is never reached). */
const RAW_ERAS = [
  [
    "2025-11-25",
    (who: Caller, path: string, method: string, params: Record<string, unknown> = {}) =>
      post(path, { jsonrpc: "2.0", id: 1, method, params }, { vars: VARS, headers: who.headers, session: "made-up" }),
  ],
  [
    "2026-07-28",
    (who: Caller, path: string, method: string, params: Record<string, unknown> = {}) =>
      modernPost(path, method, params, { vars: VARS, headers: who.headers }),
  ],
] as const;

/** How many requests of `method` the upstream behind `key` received. */
async function received(key: string, method: string): Promise<number> {
  const counts = (await (await fetch(`${names}/counts/${key}`)).json()) as { byMethod: Record<string, number> };
  return counts.byMethod[method] ?? 0;
}

/** Runs `work` and answers how many requests of `method` it caused at the upstream behind `key`. */
async function sentDuring(key: string, method: string, work: () => Promise<unknown>): Promise<number> {
  const before = await received(key, method);
  await work();
  return (await received(key, method)) - before;
}

beforeAll(async () => {
  for (const [name, persona] of Object.entries(PERSONAS))
    expect((await admin("PUT", `/personas/${name}`, persona, VARS)).status).toBe(200);
});

describe("an upstream's sys___ names on /mcp/<upstream>", () => {
  it("are never called with no persona (default deny): the route is an unknown upstream's", async () => {
    const who = await caller([]);
    for (const [era, send] of RAW_ERAS) {
      const sent = await sentDuring(KEYS.good, "tools/call", async () => {
        await expectNoSuchUpstream((path) => send(who, path, "tools/list"), "good", `${era} tools/list`);
        await expectNoSuchUpstream((path) => send(who, path, "prompts/list"), "good", `${era} prompts/list`);
        await expectNoSuchUpstream(
          (path) => send(who, path, "tools/call", { name: "sys___wipe", arguments: {} }),
          "good",
          `${era} tools/call`,
        );
        await expectNoSuchUpstream(
          (path) => send(who, path, "prompts/get", { name: "sys___greet" }),
          "good",
          `${era} prompts/get`,
        );
      });
      expect(sent, era).toBe(0);
    }
  });

  it.each([
    ["a persona allowing one tool", ["r-echo"]],
    ["a persona allowing everything", ["r-all"]],
  ])("are hidden and never called, with %s", async (_label, roles) => {
    const who = await caller(roles);
    for (const [era, send] of ERAS) {
      const tools = ((await send(who, "/mcp/good", "tools/list")).result.tools as Json[]).map((tool) => tool.name);
      expect(tools, era).not.toContain("sys___wipe");
      // The gateway's own read tool may be listed (when offload can happen on the route), and only once.
      expect(tools.filter((name) => name === "sys___read_payload").length, era).toBeLessThanOrEqual(1);
      const prompts = ((await send(who, "/mcp/good", "prompts/list")).result.prompts as Json[]).map(
        (prompt) => prompt.name,
      );
      expect(prompts, era).not.toContain("sys___greet");

      const calls = await sentDuring(KEYS.good, "tools/call", async () => {
        const answer = await send(who, "/mcp/good", "tools/call", { name: "sys___wipe", arguments: {} });
        expect(answer.error, era).toEqual({ code: -32602, message: "Unknown tool: sys___wipe" });
      });
      expect(calls, era).toBe(0);
      const gets = await sentDuring(KEYS.good, "prompts/get", async () => {
        const answer = await send(who, "/mcp/good", "prompts/get", { name: "sys___greet" });
        expect(answer.error, era).toEqual({ code: -32602, message: "Unknown prompt: sys___greet" });
      });
      expect(gets, era).toBe(0);
      const completions = await sentDuring(KEYS.good, "completion/complete", async () => {
        const answer = await send(who, "/mcp/good", "completion/complete", {
          ref: { type: "ref/prompt", name: "sys___greet" },
          argument: { name: "x", value: "" },
        });
        expect(answer.error, era).toEqual({ code: -32602, message: "Unknown prompt: sys___greet" });
      });
      expect(completions, era).toBe(0);
    }
  });

  it("still lets a persona call the upstream's ordinary tools there", async () => {
    const who = await caller(["r-echo"]);
    const answer = await legacy(who, "/mcp/good", "tools/call", { name: "echo", arguments: { text: "hi" } });
    expect(answer.result.content[0].text).toBe(`${KEYS.good}: hi`);
  });
});

describe("a deny pattern", () => {
  it.each([
    ["delete_all", "as written"],
    ["DELETE_all", "upper case"],
    ["Delete_All", "mixed case"],
    ["\uff24\uff25\uff2c\uff25\uff34\uff25_all", "fullwidth letters"],
    ["DELETE_ALL", "all upper case"],
  ])("holds for %s (%s) on both routes and in both eras", async (name) => {
    const who = await caller(["r-nodelete"]);
    for (const [era, send] of ERAS) {
      for (const [path, called] of [
        ["/mcp/good", name],
        ["/mcp", `good___${name}`],
      ] as const) {
        const sent = await sentDuring(KEYS.good, "tools/call", async () => {
          const answer = await send(who, path, "tools/call", { name: called, arguments: {} });
          expect(answer.error, `${era} ${path}`).toEqual({ code: -32602, message: `Unknown tool: ${called}` });
        });
        expect(sent, `${era} ${path}`).toBe(0);
      }
    }
  });

  it.each([
    ["an object that JavaScript cannot turn into text", { toString: 1 }, "(an object, not a string)"],
    ["an array", ["delete_all"], "(an array, not a string)"],
  ])("refuses a name that is %s with -32602, not an internal error", async (_label, name, said) => {
    // (A 2026-07-28 request with such a name lacks the Mcp-Name header it needs: refused before this.)
    const who = await caller(["r-nodelete"]);
    for (const path of ["/mcp/good", "/mcp"]) {
      const answer = await legacy(who, path, "tools/call", { name, arguments: {} });
      expect(answer.error, path).toEqual({ code: -32602, message: `Unknown tool: ${said}` });
    }
  });

  it("leaves allow exact: a tool it allows is called, a case variant of an allowed name is not allowed by it", async () => {
    const who = await caller(["r-echo"]);
    expect(
      (await legacy(who, "/mcp/good", "tools/call", { name: "echo", arguments: { text: "x" } })).result.content[0].text,
    ).toBe(`${KEYS.good}: x`);
    expect((await legacy(who, "/mcp/good", "tools/call", { name: "ECHO", arguments: {} })).error.message).toBe(
      "Unknown tool: ECHO",
    );
  });
});

describe("initialize and server/discover on /mcp", () => {
  it("carry only the instructions of upstreams the persona reaches, overridden ones included", async () => {
    expect(
      (
        await admin(
          "PUT",
          "/overrides",
          { upstreams: { far: { instructions: "Far secret guidance." }, near: { instructions: "Near guidance." } } },
          VARS,
        )
      ).status,
    ).toBe(200);
    try {
      const who = await caller(["r-near"]);
      const handshakes = await sentDuring(KEYS.far, "initialize", async () => {
        const { result } = await initialize("/mcp", { vars: VARS, headers: who.headers });
        const discovered = (await stateless(who, "/mcp", "server/discover")).result;
        for (const instructions of [result.instructions, discovered.instructions]) {
          expect(instructions).toContain("Near guidance.");
          expect(instructions).not.toContain("Far secret guidance.");
          expect(instructions).not.toContain("## far");
          expect(instructions).not.toContain("Alpha answers echo calls.");
          expect(instructions).not.toContain("## alpha");
        }
      });
      // The upstreams it cannot reach are not even opened.
      expect(handshakes).toBe(0);
      // A persona reaching everything still hears every upstream.
      const all = await caller(["r-all"]);
      const { result } = await initialize("/mcp", { vars: VARS, headers: all.headers });
      expect(result.instructions).toContain("Far secret guidance.");
      expect(result.instructions).toContain("Alpha answers echo calls.");
    } finally {
      await admin("DELETE", "/overrides", undefined, VARS);
    }
  });
});

describe("initialize and server/discover on /mcp/<upstream>", () => {
  it("say nothing of an upstream the persona does not reach, and never open it", async () => {
    const near = await caller(["r-near"]);
    const initializeBody = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const handshakes = await sentDuring(KEYS.far, "initialize", async () => {
      await expectNoSuchUpstream(
        (path) => post(path, initializeBody, { vars: VARS, headers: near.headers }),
        "far",
        "initialize",
      );
      await expectNoSuchUpstream(
        (path) => modernPost(path, "server/discover", {}, { vars: VARS, headers: near.headers }),
        "far",
        "server/discover",
      );
    });
    expect(handshakes).toBe(0);
    await expectNoSuchUpstream(
      (path) => post(path, initializeBody, { vars: VARS, headers: near.headers }),
      "alpha",
      "initialize of alpha",
    );
    const all = await caller(["r-all"]);
    expect((await initialize("/mcp/alpha", { vars: VARS, headers: all.headers })).result.instructions).toBe(
      "Alpha answers echo calls.",
    );
    expect((await stateless(all, "/mcp/alpha", "server/discover")).result.instructions).toBe(
      "Alpha answers echo calls.",
    );
  });
});

describe("URI-routed requests to an upstream the persona does not reach", () => {
  const farUri = `${KEYS.far}://own`;

  it.each(ERAS)("never reach it on /mcp, fresh or not (%s)", async (_era, send) => {
    const who = await caller(["r-near"]);
    const reads = await sentDuring(KEYS.far, "resources/read", async () => {
      // near answers a read of any URI (with its own key as the text): far must not be the one that answers.
      const answer = await send(who, "/mcp", "resources/read", { uri: farUri });
      expect(answer.result?.contents[0].text).not.toBe(KEYS.far);
    });
    expect(reads).toBe(0);
    const completions = await sentDuring(KEYS.far, "completion/complete", async () => {
      const answer = await send(who, "/mcp", "completion/complete", {
        ref: { type: "ref/resource", uri: `${KEYS.far}://{id}` },
        argument: { name: "id", value: "1" },
      });
      expect(answer.result?.completion?.values ?? []).toEqual([]);
    });
    expect(completions).toBe(0);
    // What it does reach still answers.
    expect((await send(who, "/mcp", "resources/read", { uri: `${KEYS.near}://own` })).result.contents[0].text).toBe(
      KEYS.near,
    );
  });

  it("never reaches it on /mcp with a payload URI when no bucket is bound", async () => {
    // far first in UPSTREAMS, so that an unnarrowed read would ask it first; no R2, so the read is not the gateway's own.
    const vars = {
      ...VARS,
      PAYLOADS: undefined,
      UPSTREAMS: JSON.stringify([
        { name: "far", url: `${names}/plain/${KEYS.far}/mcp` },
        { name: "near", url: `${names}/plain/${KEYS.near}/mcp` },
      ]),
    };
    const who = await caller(["r-near"]);
    const reads = await sentDuring(KEYS.far, "resources/read", async () => {
      const answer = await modern(
        "/mcp",
        "resources/read",
        { uri: `mcp-edge-gateway://payloads/${"0".repeat(32)}` },
        { vars, headers: who.headers },
      );
      expect(answer.result?.contents[0].text).not.toBe(KEYS.far);
    });
    expect(reads).toBe(0);
  });

  it("never reaches it on /mcp with a 2025 subscription either", async () => {
    const who = await caller(["r-near"]);
    const sent = await sentDuring(KEYS.far, "resources/subscribe", () =>
      legacy(who, "/mcp", "resources/subscribe", { uri: farUri }),
    );
    expect(sent).toBe(0);
  });

  it.each(RAW_ERAS)(
    "never reach it on /mcp/<upstream>: the route is an unknown upstream's, and nothing is asked (%s)",
    async (_era, send) => {
      const who = await caller(["r-near"]);
      for (const [method, params] of [
        ["resources/list", {}],
        ["resources/templates/list", {}],
        ["resources/read", { uri: farUri }],
      ] as const) {
        const sent = await sentDuring(KEYS.far, method, () =>
          expectNoSuchUpstream((path) => send(who, path, method, params), "far", method),
        );
        expect(sent, method).toBe(0);
      }
    },
  );
});

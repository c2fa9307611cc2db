/**
 * Names a configuration or a client chooses, used as keys: upstream names that are
 * `Object.prototype` members, methods that are, and plan entries that name them.
 */
import { describe, expect, inject, it } from "vitest";
import { qualifyName } from "../../src/core/names";
import { setNameFor } from "../../src/features/filters/filter-store";
import { LONG_NON_ASCII_TOOL } from "../fixtures/names-upstream";
import { initialize, request, type Json } from "../helpers/gateway";

const { alpha, beta } = inject("fixtureUrls");
const base = inject("namesUpstream");

describe("upstream names that are Object.prototype members", () => {
  const vars = {
    UPSTREAMS: JSON.stringify([
      { name: "toString", url: alpha },
      { name: "constructor", url: beta },
      { name: "hasOwnProperty", url: alpha },
    ]),
  };

  it("initialize, list and call on /mcp", async () => {
    const { session } = await initialize("/mcp", { vars });
    const list = await request("/mcp", session, "tools/list", undefined, { vars });
    const names: string[] = list.result.tools.map((t: Json) => t.name);
    expect(names).toEqual(expect.arrayContaining(["toString___echo", "constructor___echo", "hasOwnProperty___echo"]));
    expect(list.result._meta).toBeUndefined();
    for (const [name, owner] of [
      ["toString", "alpha"],
      ["constructor", "beta"],
      ["hasOwnProperty", "alpha"],
    ]) {
      const call = await request(
        "/mcp",
        session,
        "tools/call",
        { name: `${name}___echo`, arguments: { text: "hi" } },
        { vars },
      );
      expect(call.result.content[0].text).toBe(`${owner}: hi`);
    }
    const resources = await request("/mcp", session, "resources/list", undefined, { vars });
    expect(resources.result.resources.map((r: Json) => r.uri)).toEqual(
      expect.arrayContaining(["alpha://info", "beta://readme"]),
    );
  });

  it("lists and calls when a prototype-named upstream is down", async () => {
    const down = {
      UPSTREAMS: JSON.stringify([
        { name: "toString", url: alpha },
        { name: "constructor", url: "http://127.0.0.1:9/mcp", timeoutMs: 2000 },
      ]),
    };
    const { session } = await initialize("/mcp", { vars: down });
    for (const method of ["tools/list", "prompts/list", "resources/list"]) {
      const list = await request("/mcp", session, method, undefined, { vars: down });
      expect(list.result._meta["mcp-edge-gateway/unavailable"]).toEqual([
        expect.objectContaining({ upstream: "constructor" }),
      ]);
    }
    const call = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "constructor___echo", arguments: {} },
      { vars: down },
    );
    expect(call.error).toMatchObject({ code: -32010, data: { upstream: "constructor", reason: "unreachable" } });
    const read = await request("/mcp", session, "resources/read", { uri: "alpha://info" }, { vars: down });
    expect(read.result.contents[0].text).toBeDefined();
    expect((await request("/mcp", session, "logging/setLevel", { level: "info" }, { vars: down })).result).toEqual({});
  });

  it("reaches a prototype-named upstream that failed at initialize once it answers", async () => {
    const key = `late-${crypto.randomUUID()}`;
    const late = {
      UPSTREAMS: JSON.stringify([
        { name: "constructor", url: `${base}/fail-first-init/${key}/mcp` },
        { name: "alpha", url: alpha },
      ]),
    };
    const { session } = await initialize("/mcp", { vars: late });
    const call = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "constructor___echo", arguments: { text: "late" } },
      { vars: late },
    );
    expect(call.result.content[0].text).toBe(`${key}: late`);
  });

  it.each([
    ["toString", "alpha"],
    ["constructor", "beta"],
  ])("initialize, list and call on /mcp/%s", async (name, owner) => {
    const { session, result } = await initialize(`/mcp/${name}`, { vars });
    expect(result.serverInfo.name).toBe(owner);
    const list = await request(`/mcp/${name}`, session, "tools/list", undefined, { vars });
    expect(list.result.tools.map((t: Json) => t.name)).toContain("echo");
    const call = await request(
      `/mcp/${name}`,
      session,
      "tools/call",
      { name: "echo", arguments: { text: "x" } },
      { vars },
    );
    expect(call.result.content[0].text).toBe(`${owner}: x`);
  });

  it.each([["toString"], ["constructor"], ["__proto__"], ["hasOwnProperty"]])(
    "answers method-not-found for the method %s",
    async (method) => {
      const { session } = await initialize("/mcp", { vars });
      const answer = await request("/mcp", session, method, undefined, { vars });
      expect(answer.error.code).toBe(-32601);
    },
  );
});

describe("the plan's entries", () => {
  it.each([["constructor"], ["toString"], ["valueOf"]])(
    "do not find a set for the upstream %s through the prototype",
    (upstream) => {
      expect(setNameFor({ upstreams: {} }, "", upstream)).toEqual({ name: "default", explicit: false });
      expect(setNameFor({ routes: {} }, upstream, upstream)).toEqual({ name: "default", explicit: false });
      expect(setNameFor({ upstreams: { [upstream]: "mine" } }, "", upstream)).toEqual({ name: "mine", explicit: true });
    },
  );
});

describe("long non-ASCII tool names", () => {
  it("are listed cut between whole characters and still routed", async () => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "svc", url: `${base}/plain/emoji/mcp` }]) };
    const { session } = await initialize("/mcp", { vars });
    const list = await request("/mcp", session, "tools/list", undefined, { vars });
    const listed = list.result.tools.map((t: Json) => t.name).find((name: string) => name.startsWith("svc___nnn"));
    expect(listed).toBe(qualifyName("svc", LONG_NON_ASCII_TOOL));
    expect(listed).toHaveLength(63); // the cut stepped back over a pair
    expect(listed).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    const call = await request("/mcp", session, "tools/call", { name: listed, arguments: {} }, { vars });
    expect(call.result.content[0].text).toBe(`emoji: ${LONG_NON_ASCII_TOOL}`);
  });
});

describe("one resource URI listed by two upstreams", () => {
  it("is served by the first in UPSTREAMS, and the list says so", async () => {
    // Config order (zeta first) differs from name order and from the order of the answers.
    const vars = {
      UPSTREAMS: JSON.stringify([
        { name: "zeta", url: `${base}/plain/zeta/mcp` },
        { name: "able", url: `${base}/plain/able/mcp` },
      ]),
    };
    const { session } = await initialize("/mcp", { vars });
    const read = async () =>
      (await request("/mcp", session, "resources/read", { uri: "shared://doc" }, { vars })).result.contents[0].text;
    expect(await read()).toBe("zeta"); // before any list: asked in UPSTREAMS order
    for (let round = 0; round < 2; round++) {
      const list = await request("/mcp", session, "resources/list", undefined, { vars });
      const uris: string[] = list.result.resources.map((r: Json) => r.uri);
      expect(uris.filter((uri) => uri === "shared://doc")).toHaveLength(1);
      expect(list.result.resources.find((r: Json) => r.uri === "shared://doc").name).toBe("shared doc of zeta");
      expect(uris).toEqual(expect.arrayContaining(["zeta://own", "able://own"]));
      expect(list.result._meta["mcp-edge-gateway/uri-collisions"]).toEqual([
        { uri: "shared://doc", servedBy: "zeta", hidden: "able" },
      ]);
      expect(await read()).toBe("zeta");
    }
    expect(
      (await request("/mcp", session, "resources/read", { uri: "able://own" }, { vars })).result.contents[0].text,
    ).toBe("able");
  });
});

/**
 * Output filters and the admin API under hostile input, through the Worker in workerd
 * with the real KV binding and real upstreams: calls that must not see each other's
 * data, results that carry data outside what a rule keeps, answers too large to filter,
 * documents that reach for prototypes or nest without end, and the admin API switched off.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/context/call-record";
import { MAX_FILTERED_ANSWER_BYTES } from "../../src/features/filters/output-filters";
import { createApp } from "../../src/gateway";
import { gatewayFetch, initialize, request, type GatewayTarget, type Json } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const ADMIN_TOKEN = "admin-token-for-hostile-tests-0123456789";
const VARS = { ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "30000" };

function admin(method: string, path: string, body?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  return gatewayFetch(`/admin${path}`, { method, headers, ...(body !== undefined ? { body } : {}) }, VARS);
}

async function call(name: string, args: Record<string, unknown>, vars: Record<string, unknown> = VARS): Promise<Json> {
  const { session } = await initialize("/mcp", { vars });
  return (await request("/mcp", session, "tools/call", { name, arguments: args }, { vars })).result;
}

/** `[[[…]]]` nested `depth` arrays deep, as text (building it as a value would recurse). */
function nestedText(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

afterEach(async () => {
  await admin("DELETE", "/filter-sets/default");
  await admin("DELETE", "/plan");
});

describe("a cached filter set is configuration no call can change", () => {
  it("keeps one call's data out of the next call, and /seen from growing", async () => {
    const set = {
      tools: {
        alpha___get_user: {
          retain: ["/userInfo/login"],
          patches: [
            { op: "add", path: "/seen", value: [] },
            { op: "copy", from: "/userInfo/login", path: "/seen/-" },
            { op: "add", path: "/note", value: { by: "gateway" } },
            { op: "move", from: "/userInfo/login", path: "/note/login" },
          ],
        },
      },
    };
    expect((await admin("PUT", "/filter-sets/default", JSON.stringify(set))).status).toBe(200);
    const expected = (login: string) => ({ userInfo: {}, seen: [login], note: { by: "gateway", login } });
    for (const login of ["ada", "grace", "alan"]) {
      const result = await call("alpha___get_user", { login });
      expect(result.structuredContent).toEqual(expected(login));
      expect(JSON.parse(result.content[0].text)).toEqual(expected(login));
    }
  });
});

describe("a filtered result carries nothing the rule did not keep", () => {
  it("drops the upstream's _meta, unknown members, annotations and block extras", async () => {
    await admin("PUT", "/filter-sets/default", JSON.stringify({ tools: { raw___decorated: { retain: ["/keep"] } } }));
    const result = await call("raw___decorated", {});
    expect(result).toEqual({
      content: [
        { type: "text", text: '{"keep":1}' },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
      structuredContent: { keep: 1 },
    });
    expect(JSON.stringify(result)).not.toContain("leak");
  });

  it("passes an unfiltered result whole (the set is about other tools)", async () => {
    await admin("PUT", "/filter-sets/default", JSON.stringify({ tools: { raw___other: { retain: ["/keep"] } } }));
    const result = await call("raw___decorated", {});
    expect(result._meta).toEqual({ x: "leak-result-meta" });
    expect(result.content[0].annotations.note).toBe("leak-annotation");
  });
});

describe("an answer too large to filter", () => {
  it("fails the call closed, never passing it on unfiltered", async () => {
    await admin("PUT", "/filter-sets/default", JSON.stringify({ tools: { raw___huge: { retain: ["/total"] } } }));
    const mb = Math.ceil(MAX_FILTERED_ANSWER_BYTES / (1024 * 1024)) + 1;
    const result = await call("raw___huge", { mb });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toContain(
      `larger than ${MAX_FILTERED_ANSWER_BYTES} bytes, too large for filter set "default"`,
    );
    expect(result.structuredContent).toBeUndefined();
    expect(result._meta).toBeUndefined(); // not offloaded either: the unfiltered data is nowhere
  });

  // The relay reads a 2026-07-28 client's answer under an id of its own: the withheld answer must answer that one.
  it.each([
    ["a JSON body", false],
    ["an SSE stream", true],
  ])(
    "fails a 2026-07-28 client's call closed too (%s), saying why, not charging the upstream",
    {
      timeout: 60_000,
    },
    async (_label, sse) => {
      await admin("PUT", "/filter-sets/default", JSON.stringify({ tools: { raw___huge: { retain: ["/total"] } } }));
      const records: CallRecord[] = [];
      const target = createApp({
        observers: [(record) => void records.push({ ...record })],
      }) as unknown as GatewayTarget;
      const mb = Math.ceil(MAX_FILTERED_ANSWER_BYTES / (1024 * 1024)) + 1;
      const params = { name: "raw___huge", arguments: { mb, sse } };
      const answer = await modern("/mcp", "tools/call", params, { id: "big-1", vars: VARS, target });
      expect(answer.error).toBeUndefined();
      expect(answer.id).toBe("big-1");
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content[0].text).toContain(
        `larger than ${MAX_FILTERED_ANSWER_BYTES} bytes, too large for filter set "default"`,
      );
      // The upstream answered: its health is not charged with a failure.
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ upstream: "raw", upstreamStatus: 200 });
      expect(records[0]!.failure).toBeUndefined();
    },
  );
});

describe("the admin API refuses what would end in HTTP 500", () => {
  const deepValue = `{"tools":{"alpha___get_user":{"patches":[{"op":"add","path":"/x","value":${nestedText(100_000)}}]}}}`;
  it.each([
    [
      "a patch path through __proto__",
      '{"tools":{"alpha___get_user":{"patches":[{"op":"add","path":"/__proto__/polluted","value":1}]}}}',
      "/tools/alpha___get_user/patches/0/path",
      /__proto__/,
    ],
    [
      "a patch path through constructor/prototype",
      '{"tools":{"alpha___get_user":{"patches":[{"op":"replace","path":"/a/constructor/prototype/x","value":1}]}}}',
      "/tools/alpha___get_user/patches/0/path",
      /constructor\/prototype/,
    ],
    [
      "a copy from __proto__",
      '{"tools":{"alpha___get_user":{"patches":[{"op":"copy","from":"/__proto__","path":"/x"}]}}}',
      "/tools/alpha___get_user/patches/0/from",
      /__proto__/,
    ],
    // fast-json-patch's internal `_get` passed its validation, then threw a TypeError at every call (shadow mode too).
    [
      "the library's internal _get operation",
      '{"tools":{"alpha___get_user":{"patches":[{"op":"_get","path":"/login"}]}}}',
      "/tools/alpha___get_user/patches/0",
      /"op" must be one of add, remove, replace, move, copy, test/,
    ],
    [
      "a value nested 100,000 deep",
      deepValue,
      `/tools/alpha___get_user/patches/0/value${"/0".repeat(60)}`,
      /nested deeper than 64/,
    ],
    [
      "a test value nested 65 deep",
      `{"tools":{"a___b":[{"test":{"path":"/t","value":${nestedText(65)}},"retain":[""]}]}}`,
      `/tools/a___b/0/test/value${"/0".repeat(60)}`,
      /nested deeper than 64/,
    ],
  ])("a filter set with %s", async (_label, body, path, message) => {
    const response = await admin("PUT", "/filter-sets/default", body);
    expect(response.status).toBe(400);
    const answer = (await response.json()) as Json;
    expect(answer.problems).toEqual([{ path, message: expect.stringMatching(message) }]);
    expect((await admin("GET", "/filter-sets/default")).status).toBe(404);
  });

  it("refuses a plan nested too deep, and a preview of a result nested too deep", async () => {
    const plan = await admin("PUT", "/plan", `{"offload":{"include":${nestedText(70)}}}`);
    expect(plan.status).toBe(400);
    expect(((await plan.json()) as Json).problems).toEqual([
      { path: `/offload/include${"/0".repeat(63)}`, message: expect.stringMatching(/nested deeper than 64/) },
    ]);
    await admin("PUT", "/filter-sets/default", '{"tools":{"alpha___get_user":{"retain":[""]}}}');
    const preview = await admin(
      "POST",
      "/filter-sets/default/preview",
      `{"tool":"alpha___get_user","result":${nestedText(100_000)}}`,
    );
    expect(preview.status).toBe(400);
    expect(((await preview.json()) as Json).problems[0].path).toBe(`/result${"/0".repeat(64)}`);
  });

  it.each([
    ["a filter set", "PUT", "/filter-sets/default", 512 * 1024],
    ["a plan", "PUT", "/plan", 512 * 1024],
    ["a preview", "POST", "/filter-sets/default/preview", 4 * 1024 * 1024],
  ])("refuses %s body larger than its limit, naming the limit", async (_label, method, path, limit) => {
    await admin("PUT", "/filter-sets/default", '{"tools":{"alpha___get_user":{"retain":[""]}}}');
    // Valid JSON, so only the size can be what is refused.
    const body = `{"tool":"alpha___get_user","result":{"content":[],"pad":"${"x".repeat(limit)}"}}`;
    const response = await admin(method, path, body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).problems).toEqual([{ path: "", message: `larger than ${limit} bytes` }]);
  });

  it.each([
    [
      "a __proto__ patch",
      '{"tools":{"alpha___get_user":{"patches":[{"op":"add","path":"/__proto__/polluted","value":1}]}}}',
      /patches\/0\/path: .*__proto__/,
    ],
    [
      "a value nested 100,000 deep",
      `{"tools":{"alpha___get_user":{"patches":[{"op":"add","path":"/x","value":${nestedText(100_000)}}]}}}`,
      /nested deeper than 64/,
    ],
  ])(
    "fails calls closed with a located problem for a set written straight to KV with %s",
    async (_label, document, message) => {
      const vars = { ...VARS, FILTER_CACHE_TTL_MS: "0" };
      await env.GATEWAY_KV.put("filter-sets/default", document);
      const result = await call("alpha___get_user", { login: "ada" }, vars);
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(message);
      expect(JSON.stringify(result)).not.toContain("followers");
      await env.GATEWAY_KV.delete("filter-sets/default");
    },
  );
});

describe("the admin API switched off", () => {
  it.each(["/admin", "/admin/", "/admin/filter-sets", "/admin/plan", "/admin/no/such/path"])(
    "%s says it is off and how to turn it on",
    async (path) => {
      const response = await gatewayFetch(path, { headers: { authorization: "Bearer anything" } });
      expect(response.status).toBe(404);
      const body = (await response.json()) as Json;
      expect(body.error).toMatch(/admin API is off/);
      expect(body.error).toMatch(/ADMIN_TOKEN/);
      expect(body.error).toMatch(/\.dev\.vars/);
    },
  );
});

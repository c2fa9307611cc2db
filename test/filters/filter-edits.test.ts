/**
 * Live filter edits and clients that already listed tools (issue 7, item 17): a client
 * that holds a tool's upstream `outputSchema` never gets a filtered result that
 * contradicts it, learns of the change on its GET stream, and gets the filtered result
 * once it listed again. Inside workerd with the real KV binding and the SDK upstream.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { readSse } from "../../src/core/sse";
import { readListedShapes } from "../../src/storage/listed-shapes-records";
import {
  listedShapes,
  MIXED_SHAPE,
  recordListing,
  type ListingSession,
} from "../../src/features/filters/listed-shapes";
import { gatewayFetch, initialize, LATEST, request, type Json } from "../helpers/gateway";

const ADMIN_TOKEN = "admin-token-for-tests-0123456789ab";
const VARS = { ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "30000" };
const LOGIN_ONLY = '{"tools":{"alpha___get_user":{"retain":["/userInfo/login"]}}}';

function admin(method: string, path: string, body?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  return gatewayFetch(`/admin${path}`, { method, headers, ...(body !== undefined ? { body } : {}) }, VARS);
}

async function putDefault(body: string): Promise<void> {
  expect((await admin("PUT", "/filter-sets/default", body)).status).toBe(200);
}

function toolName(path: string): string {
  return path === "/mcp" ? "alpha___get_user" : "get_user";
}

async function getUserTool(path: string, session: string): Promise<Json> {
  const tools = (await request(path, session, "tools/list", undefined, { vars: VARS })).result.tools as Json[];
  return tools.find((t) => t.name === toolName(path));
}

async function callGetUser(path: string, session: string): Promise<Json> {
  return (
    await request(path, session, "tools/call", { name: toolName(path), arguments: { login: "ada" } }, { vars: VARS })
  ).result;
}

afterEach(async () => {
  await admin("DELETE", "/filter-sets/default");
  await admin("DELETE", "/plan");
});

describe("a filter added after the client listed tools", () => {
  it.each(["/mcp", "/mcp/alpha"])(
    "on %s, withholds the call with a tool error until the client lists again",
    async (path) => {
      const { session } = await initialize(path, { vars: VARS });
      expect((await getUserTool(path, session)).outputSchema).toBeDefined(); // the client now holds the upstream's schema
      await putDefault(LOGIN_ONLY);

      const withheld = await callGetUser(path, session);
      expect(withheld.isError).toBe(true);
      expect(withheld.structuredContent).toBeUndefined();
      expect(withheld.content[0].text).toMatch(
        /output filter for .*get_user changed since this session listed tools.*List tools again \(tools\/list\) and retry/,
      );

      expect((await getUserTool(path, session)).outputSchema).toBeUndefined();
      const filtered = await callGetUser(path, session);
      expect(filtered.isError).toBeUndefined();
      expect(filtered.structuredContent).toEqual({ userInfo: { login: "ada" } });
    },
  );

  it("withholds it when the filter came back after the client listed without it", async () => {
    await putDefault(LOGIN_ONLY);
    const { session } = await initialize("/mcp", { vars: VARS }); // started filtered
    await admin("DELETE", "/filter-sets/default");
    expect((await getUserTool("/mcp", session)).outputSchema).toBeDefined(); // listed unfiltered
    await putDefault(LOGIN_ONLY); // filtered again, as when the session started

    const withheld = await callGetUser("/mcp", session);
    expect(withheld.isError).toBe(true);
    expect(withheld.content[0].text).toMatch(/List tools again/);
    expect((await getUserTool("/mcp", session)).outputSchema).toBeUndefined();
    expect((await callGetUser("/mcp", session)).structuredContent).toEqual({ userInfo: { login: "ada" } });
  });

  it("lets calls through when what the list shows did not change", async () => {
    await putDefault(LOGIN_ONLY);
    const { session } = await initialize("/mcp", { vars: VARS });
    expect((await callGetUser("/mcp", session)).structuredContent).toEqual({ userInfo: { login: "ada" } }); // never listed
    expect((await getUserTool("/mcp", session)).outputSchema).toBeUndefined();
    // A rule's content changes the result, not whether the schema is listed.
    await putDefault('{"tools":{"alpha___get_user":{"retain":["/userInfo/type"]}}}');
    expect((await callGetUser("/mcp", session)).structuredContent).toEqual({ userInfo: { type: "PhysicalPerson" } });
    // A filter for a tool of another upstream leaves alpha's shapes alone.
    await putDefault('{"tools":{"alpha___get_user":{"retain":["/userInfo/type"]},"beta___echo":{"retain":[""]}}}');
    expect((await callGetUser("/mcp", session)).structuredContent).toEqual({ userInfo: { type: "PhysicalPerson" } });
  });
});

describe("the GET stream", () => {
  it("announces notifications/tools/list_changed when a filter changes what the list shows", async () => {
    const vars = { ...VARS, FILTER_CACHE_TTL_MS: "0" };
    const { session } = await initialize("/mcp", { vars });
    const stream = await gatewayFetch(
      "/mcp",
      { headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": LATEST } },
      vars,
    );
    expect(stream.status).toBe(200);
    const events = readSse(stream.body!);
    await putDefault(LOGIN_ONLY);
    // Read until the notification arrives; the test's timeout bounds the wait.
    let message: Json;
    do message = JSON.parse((await events.next()).value!.data);
    while (message.method !== "notifications/tools/list_changed");
    expect(message).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    await events.return(undefined);
  });
});

describe("the record of what a session listed", () => {
  const session = (id: string): ListingSession => ({
    id,
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
    filterShapes: { alpha: "A" },
  });

  it("writes nothing while the lists match the session's start", async () => {
    await recordListing(env.GATEWAY_KV, session("same"), ["alpha", "beta"], { alpha: "A" }, false);
    expect(await readListedShapes(env.GATEWAY_KV, "same")).toBeNull();
    expect(await listedShapes(env.GATEWAY_KV, session("same"))).toEqual({ alpha: "A" });
  });

  it("takes a first page as the new list, and marks a later page of another shape as mixed", async () => {
    const state = session("paged");
    await recordListing(env.GATEWAY_KV, state, ["alpha", "beta"], { alpha: "B" }, false);
    expect(await listedShapes(env.GATEWAY_KV, state)).toEqual({ alpha: "B" });
    await recordListing(env.GATEWAY_KV, state, ["alpha", "beta"], { alpha: "B", beta: "C" }, true);
    expect(await listedShapes(env.GATEWAY_KV, state)).toEqual({ alpha: "B", beta: MIXED_SHAPE });
    await recordListing(env.GATEWAY_KV, state, ["alpha", "beta"], { alpha: "A" }, false); // a new walk, back to the start's shapes
    expect(await listedShapes(env.GATEWAY_KV, state)).toEqual({ alpha: "A" });
  });
});

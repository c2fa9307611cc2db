/**
 * Requests no admin route takes get the admin API's own JSON errors naming the path (404,
 * or 405 with Allow when the path takes other methods), never the MCP endpoint's
 * JSON-RPC 404; and only once the admin token was checked, so an unauthenticated caller
 * learns nothing about which paths exist.
 */
import { describe, expect, it } from "vitest";
import { admin } from "../helpers/admin";
import { gatewayFetch } from "../helpers/gateway";
import { ADMIN_VARS } from "../helpers/admin";

describe("a request no admin route takes", () => {
  it.each([
    ["GET", "/no-such-thing"],
    ["GET", "/personas/a/b"],
    ["POST", "/filter-sets/x/nothing"],
    ["GET", "/"],
  ])("%s /admin%s answers the admin API's 404 naming the path", async (method, path) => {
    const response = await admin(method, path);
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: string; jsonrpc?: string };
    expect(body.jsonrpc).toBeUndefined();
    expect(body.error).toContain(`/admin${path}`);
    expect(body.error).not.toContain("MCP endpoint");
  });

  it.each([
    ["POST", "/personas", ["GET", "PUT"]],
    ["PATCH", "/plan", ["GET", "PUT", "DELETE"]],
    ["PUT", "/api-keys", ["GET", "POST"]],
    ["GET", "/pins/alpha/echo/approve", ["POST"]],
  ])("%s /admin%s answers 405 with the methods the path takes", async (method, path, allowed) => {
    const response = await admin(method, path, method === "GET" ? undefined : {});
    expect(response.status).toBe(405);
    const allow = (response.headers.get("allow") ?? "").split(", ");
    expect(allow.sort()).toEqual([...allowed].sort());
    const body = (await response.json()) as { error: string };
    expect(body.error).toContain(`/admin${path}`);
    expect(body.error).toContain(method);
  });

  it.each([
    ["no token", {}],
    ["a wrong token", { authorization: "Bearer not-the-token" }],
  ])("with %s answers 401 whether the path exists or not", async (_label, headers) => {
    // A source of its own: wrong tokens are throttled per source (docs/admin-api.md).
    const source = `192.0.2.${crypto.getRandomValues(new Uint8Array(1))[0]}-${crypto.randomUUID()}`;
    const answers = await Promise.all(
      [
        ["GET", "/no-such-thing"],
        ["POST", "/personas"],
        ["GET", "/personas"],
      ].map(async ([method, path]) => {
        const init = { method, headers: { ...headers, "cf-connecting-ip": source } };
        const response = await gatewayFetch(`/admin${path}`, init, ADMIN_VARS);
        return [response.status, await response.text()] as const;
      }),
    );
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]![0]).toBe(401);
  });

  it("leaves the routes that exist as they were", async () => {
    expect((await admin("GET", "/plan")).status).not.toBe(405);
    expect((await admin("GET", "/personas")).status).toBe(200);
  });
});

/**
 * Aliases on /mcp as a shaping override (`alias` in the overrides document): the tool or
 * prompt is listed under its alias, called by it (audited under both names) or by its
 * original name, live on the next request; a bad alias is refused where it is.
 */
import { afterEach, describe, expect, it } from "vitest";
import { admin, ADMIN_VARS, putDocument } from "../helpers/admin";
import { initialize, request, type Json } from "../helpers/gateway";
import { eventWhere } from "./audit-events";

const VARS = ADMIN_VARS;

afterEach(async () => {
  await admin("DELETE", "/overrides");
});

async function mcpSession() {
  const { session } = await initialize("/mcp", { vars: VARS });
  return {
    list: async (method: string, key: string): Promise<string[]> =>
      ((await request("/mcp", session, method, {}, { vars: VARS })).result[key] as Json[]).map((e) => e.name),
    call: (method: string, params: unknown): Promise<Json> => request("/mcp", session, method, params, { vars: VARS }),
  };
}

describe("aliases on /mcp", () => {
  it("list a tool and a prompt under their aliases; both names call them", async () => {
    const alias = `say_${crypto.randomUUID().slice(0, 8)}`;
    const client = await mcpSession();
    expect(await client.list("tools/list", "tools")).toContain("alpha___echo");
    await putDocument("/overrides", {
      tools: { alpha___echo: { alias, description: "Says it back." } },
      prompts: { alpha___greet: { alias: "hello" } },
    });
    const tools = await client.list("tools/list", "tools");
    expect(tools).toContain(alias);
    expect(tools).not.toContain("alpha___echo");
    expect(tools).toContain("alpha___add"); // nothing else changes
    expect(await client.list("prompts/list", "prompts")).toContain("hello");

    const byAlias = await client.call("tools/call", { name: alias, arguments: { text: "a" } });
    expect(byAlias.result.content[0].text).toBe("alpha: a");
    const byName = await client.call("tools/call", { name: "alpha___echo", arguments: { text: "b" } });
    expect(byName.result.content[0].text).toBe("alpha: b");
    const prompt = await client.call("prompts/get", { name: "hello", arguments: { name: "Ada" } });
    expect(prompt.result.messages[0].content.text).toBe("Hello, Ada!");
    const event = await eventWhere(`tool=${alias}`, () => true);
    expect(event).toMatchObject({ "gen_ai.tool.name": alias, "gateway.tool.qualified_name": "alpha___echo" });

    await admin("DELETE", "/overrides");
    expect(await client.list("tools/list", "tools")).toContain("alpha___echo");
  });

  it.each([
    [{ tools: { alpha___echo: { alias: "a___b" } } }, "/tools/alpha___echo/alias", "without '___'"],
    [{ tools: { alpha___echo: { alias: "x" }, alpha___add: { alias: "x" } } }, "/tools/alpha___add/alias", "names two"],
    [{ prompts: { alpha___greet: { alias: "" } } }, "/prompts/alpha___greet/alias", "1-64"],
  ])("refuses %j at %s", async (document, path, message) => {
    const response = await admin("PUT", "/overrides", document);
    expect(response.status).toBe(400);
    expect((await response.json<Json>()).problems).toContainEqual({ path, message: expect.stringContaining(message) });
  });
});

/**
 * Every layer applies to a named server's aliased tool as to its original: the output filter
 * of `<upstream>___stats` shapes the call of its alias, a pinned tool whose definition changed
 * is held under enforce when called by alias, and the audit event of an aliased call names
 * both the alias and `<upstream>___<tool>`, on the server's route. The pins fixture upstream
 * (test/fixtures/pins-upstream.ts) under a fresh label, the real KV, Queue and R2.
 */
import { afterEach, describe, expect, it } from "vitest";
import { admin, ADMIN_VARS, putDocument } from "../helpers/admin";
import { eventsOnceWritten } from "../helpers/audit";
import { eventWhere } from "./audit-events";
import { request, type Json, type Vars } from "../helpers/gateway";
import { pinClient, pinVars, switchVariant, tool } from "../helpers/pins";
import { FILTERED_META_KEY } from "../../src/features/filters/output-filters";

const tag = () => crypto.randomUUID().slice(0, 8);

function varsOf(name: string): Vars {
  return { ...pinVars({ name, pinning: "enforce" }), ...ADMIN_VARS };
}

async function putServer(name: string, document: unknown, vars: Vars): Promise<void> {
  const response = await admin("PUT", `/servers/${name}`, document, { vars });
  expect(response.status, await response.clone().text()).toBe(201);
}

afterEach(async () => {
  await admin("DELETE", "/filter-sets/default");
});

describe("an aliased tool on a named server", () => {
  it("is filtered as its original, and its call is audited under both names on the server's route", async () => {
    const upstream = `nsf${tag()}`;
    const vars = varsOf(upstream);
    const count = `count_${tag()}`;
    await switchVariant(upstream, "output");
    await putServer(upstream, { tools: [{ pick: `${upstream}___stats`, alias: count }] }, vars);
    await putDocument("/filter-sets/default", { tools: { [`${upstream}___stats`]: { retain: ["/count"] } } }, vars);

    const client = await pinClient(`/mcp/servers/${upstream}`, vars);
    const listed = tool(await client.tools(), count);
    expect(listed.outputSchema).toBeUndefined(); // the filter's shaping, under the alias
    expect(listed._meta[FILTERED_META_KEY].set).toBe("default");
    const answer = await client.call(count, { items: ["a", "b"] });
    expect(answer.result.structuredContent).toEqual({ count: 2 }); // `detail` retained away

    const byAlias = await eventsOnceWritten(`tool=${count}`, 1);
    const byOriginal = await eventsOnceWritten(`tool=${upstream}___stats`, 1);
    expect(byAlias.map((e) => e["gateway.event_id"])).toEqual(byOriginal.map((e) => e["gateway.event_id"]));
    expect(byAlias[0]).toMatchObject({
      "gen_ai.tool.name": count,
      "gateway.tool.qualified_name": `${upstream}___stats`,
      "gateway.route": `/mcp/servers/${upstream}`,
      "gateway.upstream": upstream,
      "gateway.filter.set": "default",
    });
  });

  it("is held by its pin when the upstream changed it, under enforce", async () => {
    const upstream = `nsp${tag()}`;
    const vars = varsOf(upstream);
    await switchVariant(upstream, "base");
    await putServer(upstream, { tools: [{ pick: `${upstream}___add`, alias: "plus" }] }, vars);
    const client = await pinClient(`/mcp/servers/${upstream}`, vars);
    const before = tool(await client.tools(), "plus");
    expect(before.description).toBe("Adds two numbers");
    expect((await client.call("plus", { a: 1, b: 2 })).result.content[0].text).toBe("3");

    await switchVariant(upstream, "schema"); // add now takes a third number
    const after = tool(await client.tools(), "plus");
    expect(after).toEqual(before); // the approved definition, under its alias
    const held = await client.call("plus", { a: 1, b: 2 });
    expect(held.result.isError).toBe(true);
    expect(held.result.content[0].text).toContain("pending change");
  });
});

describe("aliased prompts", () => {
  it("are audited under both names (AUDIT records every request)", async () => {
    const upstream = `nsq${tag()}`;
    const vars = { ...varsOf(upstream), AUDIT: JSON.stringify({ record: "requests" }) };
    await switchVariant(upstream, "base");
    const alias = `hello_${tag()}`;
    await putServer(upstream, { prompts: [{ pick: `${upstream}___greet`, alias }] }, vars);
    const client = await pinClient(`/mcp/servers/${upstream}`, vars);
    expect((await client.prompts()).map((p: Json) => p.name)).toEqual([alias]);
    const params = { name: alias, arguments: { name: "Ada" } };
    const got = await request(`/mcp/servers/${upstream}`, client.session, "prompts/get", params, { vars });
    expect(got.result.messages.length).toBeGreaterThan(0);
    const event = await eventWhere(`upstream=${upstream}`, (e) => e["mcp.method.name"] === "prompts/get");
    expect(event).toMatchObject({
      "gen_ai.prompt.name": alias,
      "gateway.prompt.qualified_name": `${upstream}___greet`,
    });
  });
});

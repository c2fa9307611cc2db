/**
 * A tool whose results a `redact` rule may change is listed without its `outputSchema`
 * (features/guardrails/list-schemas.ts): a marker in `structuredContent` may break the
 * upstream's schema, and a client that validates would refuse the result. Through the
 * Worker with alpha's SDK tools (get_user and add declare an outputSchema): only the
 * tools and callers the rule covers lose it, on both routes; every other byte of the list
 * is the upstream's; a `block` rule changes no listed schema.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { admin, ADMIN_VARS } from "../helpers/admin";
import { admin as authAdmin, authVars, makeKey } from "../helpers/auth";
import { initialize, messageTexts, post, type Vars } from "../helpers/gateway";

type Rule = Record<string, unknown>;

async function putRules(rules: Rule[]): Promise<void> {
  const response = await admin("PUT", "/guardrails", { rules });
  if (response.status !== 200) throw new Error(`PUT /admin/guardrails: ${response.status} ${await response.text()}`);
}

/** The raw text of a tools/list answer on `path`. */
async function listText(path: string, vars: Vars = ADMIN_VARS, headers: Record<string, string> = {}): Promise<string> {
  const { session } = await initialize(path, { vars, headers });
  const answer = await post(path, { jsonrpc: "2.0", id: 5, method: "tools/list" }, { session, vars, headers });
  return (await messageTexts(answer)).pop()!;
}

type Tool = { name: string; outputSchema?: unknown };
const tool = (text: string, name: string): Tool => JSON.parse(text).result.tools.find((t: Tool) => t.name === name);

// Before and after: the suite shares one KV, and the lists read before a rule is set must see none.
beforeEach(async () => {
  await admin("DELETE", "/guardrails");
});
afterEach(async () => {
  await admin("DELETE", "/guardrails");
});

describe("the outputSchema of a tool under a redact rule", () => {
  it("is withheld for the tools the rule names, and only the member goes", async () => {
    const before = await listText("/mcp");
    expect(tool(before, "alpha___get_user").outputSchema).toBeDefined();
    await putRules([{ name: "pii", action: "redact", detectors: ["personal"], on: ["result"], tools: ["get_*"] }]);
    const after = await listText("/mcp");
    expect(tool(after, "alpha___get_user").outputSchema).toBeUndefined();
    // add is out of the rule's scope: its schema is the upstream's, byte for byte.
    expect(tool(after, "alpha___add").outputSchema).toEqual(tool(before, "alpha___add").outputSchema);
    const schema = JSON.stringify(tool(before, "alpha___add").outputSchema);
    expect(after).toContain(schema);
    // Nothing else in the list changed: the answer is the one before, less the withheld member
    // (and its cursor, signed per session).
    const [expected, got] = [JSON.parse(before), JSON.parse(after)];
    delete expected.result.tools.find((t: Tool) => t.name === "alpha___get_user").outputSchema;
    for (const answer of [expected, got]) delete answer.result.nextCursor;
    expect(got).toEqual(expected);
  });

  it("is withheld on /mcp/<upstream> too, where names are the upstream's own", async () => {
    await putRules([{ name: "pii", action: "redact", detectors: ["personal"], on: ["result"], tools: ["get_user"] }]);
    const list = await listText("/mcp/alpha");
    expect(tool(list, "get_user").outputSchema).toBeUndefined();
    expect(tool(list, "add").outputSchema).toBeDefined();
  });

  it("stays for block and warn rules and for rules on arguments only", async () => {
    await putRules([
      { name: "no-keys", action: "block", detectors: ["secrets"], on: ["result"] },
      { name: "watch", action: "warn", detectors: ["personal"], on: ["result"] },
      { name: "cards-out", action: "redact", detectors: ["personal"], on: ["arguments"] },
    ]);
    expect(tool(await listText("/mcp"), "alpha___get_user").outputSchema).toBeDefined();
  });

  it("is withheld for the persona a rule names, and listed for any other", async () => {
    const vars = authVars({ apiKeys: true }, { FILTER_CACHE_TTL_MS: "0" });
    for (const [name, role] of [
      ["partner", "s-partner"],
      ["staff", "s-staff"],
    ])
      expect((await authAdmin("PUT", `/personas/${name}`, { roles: [role], allow: ["alpha___*"] }, vars)).status).toBe(
        200,
      );
    const rules = [
      { name: "partners", action: "redact", detectors: ["personal"], on: ["result"], personas: ["partner"] },
    ];
    expect((await authAdmin("PUT", "/guardrails", { rules }, vars)).status).toBe(200);
    const schemaFor = async (role: string) => {
      const { headers } = await makeKey({ principal: `p-${role}`, roles: [role] }, vars);
      return tool(await listText("/mcp", vars, headers), "alpha___get_user").outputSchema;
    };
    expect(await schemaFor("s-partner")).toBeUndefined();
    expect(await schemaFor("s-staff")).toBeDefined();
    await authAdmin("DELETE", "/guardrails", undefined, vars);
  });
});

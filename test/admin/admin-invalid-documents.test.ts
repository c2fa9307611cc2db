/**
 * A stored KV document that is invalid (written straight into KV) is never edited one
 * entry at a time: such an admin write would keep only its own entry and drop the
 * operator's others. It is refused with 409 saying how to fix it (replace the whole
 * document), and the stored text stays as it was. Personas and pin decisions.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { admin } from "../helpers/admin";
import { pinClient, pinVars, switchVariant } from "../helpers/pins";
import type { Json } from "../helpers/gateway";

const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;
const PERSONA = { roles: ["r"], allow: ["alpha___*"] };

describe("the personas document, stored invalid", () => {
  // Valid JSON with one persona's allow misspelt: the whole document fails its check.
  const invalid = JSON.stringify({
    analyst: { roles: ["a"], allow: ["alpha___*"] },
    broken: { roles: ["b"], alow: ["beta___*"] },
  });

  it.each([
    ["PUT", "/personas/newcomer", PERSONA],
    ["PUT", "/personas/analyst", PERSONA],
    ["DELETE", "/personas/analyst", undefined],
  ])("refuses %s %s with 409 naming the fix, and keeps every byte", async (method, path, body) => {
    await kv.put("personas", invalid);
    const response = await admin(method, path, body);
    expect(response.status).toBe(409);
    const answer = (await response.json()) as Json;
    expect(answer.error).toContain("invalid");
    expect(answer.error).toContain("PUT /admin/personas");
    expect(answer.problems.map((p: Json) => p.path)).toContain("/broken/alow");
    expect(await kv.get("personas")).toBe(invalid);
  });

  it("shows what is stored and why it is invalid, and is fixed by replacing it whole", async () => {
    await kv.put("personas", invalid);
    const shown = (await (await admin("GET", "/personas")).json()) as Json;
    expect(shown.personas).toEqual({});
    expect(shown.invalid.stored).toBe(invalid);
    const fixed = { analyst: { roles: ["a"], allow: ["alpha___*"] }, broken: { roles: ["b"], allow: ["beta___*"] } };
    const replaced = await admin("PUT", "/personas", { personas: fixed });
    expect(replaced.status).toBe(200);
    expect(JSON.parse((await kv.get("personas"))!)).toMatchObject(fixed);
    // Now one persona at a time works again, and keeps the others.
    expect((await admin("PUT", "/personas/newcomer", PERSONA)).status).toBe(200);
    expect(Object.keys(JSON.parse((await kv.get("personas"))!)).sort()).toEqual(["analyst", "broken", "newcomer"]);
    await kv.delete("personas");
  });

  it.each([
    ["not wrapped in personas", { analyst: PERSONA }],
    ["an invalid persona", { personas: { analyst: { roles: "a" } } }],
  ])("refuses a whole-document PUT with %s, storing nothing", async (_label, body) => {
    await kv.put("personas", invalid);
    expect((await admin("PUT", "/personas", body)).status).toBe(400);
    expect(await kv.get("personas")).toBe(invalid);
    await kv.delete("personas");
  });
});

describe("an upstream's pin decisions, stored invalid", () => {
  it("refuse approving, rejecting or forgetting one definition with 409, and keep every byte", async () => {
    const name = "p-invalid-decisions";
    const vars = pinVars({ name, pinning: "enforce" });
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    await switchVariant(name, "schema");
    await client.tools();
    const pins = (await (await admin("GET", `/pins/${name}`, undefined, { vars })).json()) as Json;
    const digest = pins.definitions.find((d: Json) => d.name === "add" && d.kind === "tool").pending.digest as string;
    const decisionsKey = `pin-decisions/${name}`;
    const invalid = '{"v": 1, "entries": "an operator\'s decisions, mangled"}';
    await kv.put(decisionsKey, invalid);
    const pinsText = await kv.get(`pins/${name}`);

    for (const [method, path, body] of [
      ["POST", `/pins/${name}/add/approve`, { digest }],
      ["POST", `/pins/${name}/add/reject`, { digest }],
      ["DELETE", `/pins/${name}/add?kind=tool`, undefined],
    ] as const) {
      const response = await admin(method, path, body, { vars });
      expect(response.status, path).toBe(409);
      const answer = (await response.json()) as Json;
      expect(answer.error, path).toContain(`DELETE /admin/pins/${name}`);
      expect(answer.invalid, path).toEqual([decisionsKey]);
      expect(await kv.get(decisionsKey), path).toBe(invalid);
      expect(await kv.get(`pins/${name}`), path).toBe(pinsText);
    }
    // The document-level fix works.
    expect((await admin("DELETE", `/pins/${name}`, undefined, { vars })).status).toBe(200);
  });
});

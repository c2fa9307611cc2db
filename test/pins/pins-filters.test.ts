/**
 * Tool pinning beside the gateway's own shaping of lists (output filters, text overrides):
 * pins fingerprint what the upstream said, never what the gateway made of it. An
 * operator editing a filter set or an override, the upstream unchanged, changes no pin and
 * holds nothing; an upstream changing a part the shaping hides (a filtered tool's
 * `outputSchema`, an overridden description) is a change the pins see. Inside workerd with
 * the real KV binding and the SDK pins upstream (test/fixtures/pins-upstream.ts, `output*`).
 */
import { afterEach, describe, expect, test } from "vitest";
import { admin, putDocument } from "../helpers/admin";
import type { Json, Vars } from "../helpers/gateway";
import { pinClient, pinVars, switchVariant, tool } from "../helpers/pins";
import { FILTERED_META_KEY } from "../../src/features/filters/output-filters";

const MODES = ["warn", "enforce"] as const;

/** The vars of a gateway pinning upstream `name`, reading filter sets and overrides afresh on every request. */
function varsOf(name: string, pinning: "warn" | "enforce"): Vars {
  return { ...pinVars({ name, pinning }), FILTER_CACHE_TTL_MS: "0" };
}

/** A filter set that keeps only the count of `stats` of upstream `name`: its listed `outputSchema` is removed. */
async function filterStats(name: string): Promise<void> {
  await putDocument("/filter-sets/default", { tools: { [`${name}___stats`]: { retain: ["/count"] } } });
}

/** The pin of tool `stats` of upstream `name`, as `GET /admin/pins/<name>` shows it. */
async function statsPin(name: string, vars: Vars): Promise<Json> {
  const response = await admin("GET", `/pins/${name}`, undefined, { vars });
  expect(response.status).toBe(200);
  const pins = await response.json<Json>();
  return pins.definitions.find((d: Json) => d.kind === "tool" && d.name === "stats");
}

afterEach(async () => {
  await admin("DELETE", "/filter-sets/default");
  await admin("DELETE", "/overrides");
});

describe.each(MODES)("pinning %s, the upstream unchanged", (mode) => {
  test("a filter set added and removed changes no pin, holds nothing, and the list stays shaped", async () => {
    const name = `pf-filter-${mode}`;
    const vars = varsOf(name, mode);
    await switchVariant(name, "output");
    const client = await pinClient(`/mcp/${name}`, vars);
    const upstreams = tool(await client.tools(), "stats");
    expect(upstreams.outputSchema.properties.detail).toBeDefined();
    const first = await statsPin(name, vars);
    expect(first.status).toBe("pinned");

    await filterStats(name);
    const shaped = tool(await client.tools(), "stats");
    // The filter's shaping is what clients get, under enforce too: never the schema the results no longer match.
    expect(shaped.outputSchema).toBeUndefined();
    expect(shaped._meta[FILTERED_META_KEY].set).toBe("default");
    const pin = await statsPin(name, vars);
    expect(pin.status).toBe("pinned");
    expect(pin.pending).toBeUndefined();
    expect(pin.approved.digest).toBe(first.approved.digest);
    const answer = await client.call("stats", { items: ["a", "b"] });
    expect(answer.result.isError).toBeUndefined();
    expect(answer.result.structuredContent).toEqual({ count: 2 });

    await admin("DELETE", "/filter-sets/default");
    expect(tool(await client.tools(), "stats")).toEqual(upstreams);
    const after = await statsPin(name, vars);
    expect(after.status).toBe("pinned");
    expect(after.approved.digest).toBe(first.approved.digest);
  });

  test("an override edited changes no pin, and the list shows the override", async () => {
    const name = `pf-override-${mode}`;
    const vars = varsOf(name, mode);
    await switchVariant(name, "output");
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    const first = await statsPin(name, vars);

    await putDocument("/overrides", { tools: { [`${name}___stats`]: { description: "Counts, says the gateway" } } });
    expect(tool(await client.tools(), "stats").description).toBe("Counts, says the gateway");
    const pin = await statsPin(name, vars);
    expect(pin.status).toBe("pinned");
    expect(pin.approved.digest).toBe(first.approved.digest);
  });
});

describe.each(MODES)("pinning %s, the upstream changing what the shaping hides", (mode) => {
  test("a filtered tool's outputSchema: the pin records the upstream's definition and sees the change", async () => {
    const name = `pf-schema-${mode}`;
    const vars = varsOf(name, mode);
    await switchVariant(name, "output");
    await filterStats(name); // filtered from the first sight on
    const client = await pinClient(`/mcp/${name}`, vars);
    expect(tool(await client.tools(), "stats").outputSchema).toBeUndefined();
    const first = await statsPin(name, vars);
    expect(first.status).toBe("pinned");
    expect(first.approved.definition.outputSchema.properties.detail).toBeDefined(); // what the upstream said

    await switchVariant(name, "output-schema");
    const listed = tool(await client.tools(), "stats");
    const pin = await statsPin(name, vars);
    expect(pin.status).toBe("pending");
    expect(pin.approved.digest).toBe(first.approved.digest);
    expect(pin.pending.diff.changes.map((c: Json) => c.path)).toEqual([expect.stringMatching(/^\/outputSchema\//)]);
    // Under enforce the approved version is served, shaped by the filter like any other.
    expect(listed.outputSchema).toBeUndefined();
    expect(listed._meta[FILTERED_META_KEY].set).toBe("default");
  });

  test("an overridden description: the pin sees the upstream's new description", async () => {
    const name = `pf-description-${mode}`;
    const vars = varsOf(name, mode);
    await switchVariant(name, "output");
    await putDocument("/overrides", { tools: { [`${name}___stats`]: { description: "Counts, says the gateway" } } });
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    const first = await statsPin(name, vars);
    expect(first.approved.definition.description).toBe("Counts the items");

    await switchVariant(name, "output-description");
    expect(tool(await client.tools(), "stats").description).toBe("Counts, says the gateway");
    const pin = await statsPin(name, vars);
    expect(pin.status).toBe("pending");
    const change = { path: "/description", after: "Counts the items, the detail too" };
    expect(pin.pending.diff.changes).toEqual([expect.objectContaining(change)]);
  });
});

/**
 * Tool pinning against hostile upstream definitions and many upstreams, through the
 * Worker: a schema nested past any recursive walk (the list of every other upstream stays
 * whole, the sweep goes on), a changed schema whose `pattern` backtracks catastrophically
 * (the fit check never runs it), and a Cron rotation that reaches every pinned upstream.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, inject, test } from "vitest";
import worker from "../../src/index";
import { admin } from "../helpers/admin";
import type { Json, Vars } from "../helpers/gateway";
import { pinClient, pinVars, switchVariant, tool } from "../helpers/pins";
import { SWEEP_MAX_UPSTREAMS, type SweepReport } from "../../src/features/pins/pin-sweep";
import { SWEEP_REPORT_KEY } from "../../src/features/pins/pin-store";
import { argumentsMisfit } from "../../src/features/pins/pin-arguments";
import { canonicalJson } from "../../src/core/canonical-json";

const CRON_PERIOD_MS = 5 * 60_000;

async function runCron(vars: Vars, scheduledTime: Date): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled!(
    createScheduledController({ scheduledTime, cron: "*/5 * * * *" }),
    { ...env, ...vars } as never,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

/** Vars with upstreams `names`, each the pins fixture under its own label. */
function manyPinned(names: readonly string[], pinning: "warn" | "enforce"): Vars {
  const upstreams = names.map((name) => ({ name, url: `${inject("pinsUpstreamUrl")}/${name}/mcp`, pinning }));
  return { ...pinVars({ name: names[0]! }), UPSTREAMS: JSON.stringify(upstreams) };
}

test("a tool whose schema nests 20,000 levels: the merged /mcp list keeps every other upstream's tools, the deep one is held with a nesting-depth finding", async () => {
  const [deep, calm] = ["p-deep", "p-deep-calm"];
  const vars = manyPinned([deep, calm], "enforce");
  await switchVariant(deep, "deep");
  const client = await pinClient("/mcp", vars);
  const tools = await client.tools();
  expect(tool(tools, `${calm}___add`)).toBeDefined();
  expect(tool(tools, `${calm}___echo`)).toBeDefined();
  expect(tool(tools, `${deep}___echo`)).toBeDefined();
  expect(tool(tools, `${deep}___deep`)).toBeUndefined(); // held: first sight with a high finding, under enforce
  const pins = await (await admin("GET", `/pins/${deep}`, undefined, { vars })).json<Json>();
  const held = pins.definitions.find((d: Json) => d.name === "deep");
  expect(held.status).toBe("held");
  const version = held.pending ?? held.approved;
  expect(version.findings).toEqual(
    expect.arrayContaining([expect.objectContaining({ rule: "nesting-depth", severity: "high" })]),
  );
  expect(typeof version.definition).toBe("string"); // shown as its text: too deep to serialise as an object
});

test("the sweep observes a deeply nested upstream and goes on with the next", async () => {
  const [deep, calm] = ["p-sweep-deep", "p-sweep-calm"];
  const vars = manyPinned([deep, calm], "warn");
  await switchVariant(deep, "deep");
  await runCron(vars, new Date("2026-11-24T10:00:00Z"));
  const report = await env.GATEWAY_KV.get<SweepReport>(SWEEP_REPORT_KEY, "json");
  expect(report!.checked.map((c) => c.upstream).sort()).toEqual([calm, deep].sort());
  expect(report!.checked.find((c) => c.upstream === deep)).toMatchObject({ tools: 2 });
});

test(`consecutive Cron runs every 5 minutes reach every one of 20 pinned upstreams (${SWEEP_MAX_UPSTREAMS} a run)`, async () => {
  const names = Array.from({ length: 20 }, (_, i) => `p-rot-${i}`);
  const vars = manyPinned(names, "warn");
  const swept = new Set<string>();
  const t0 = Date.parse("2026-11-24T10:00:00Z");
  const runs = Math.ceil(names.length / SWEEP_MAX_UPSTREAMS);
  for (let run = 0; run < runs; run++) {
    await runCron(vars, new Date(t0 + run * CRON_PERIOD_MS));
    const report = await env.GATEWAY_KV.get<SweepReport>(SWEEP_REPORT_KEY, "json");
    expect(report!.checked).toHaveLength(SWEEP_MAX_UPSTREAMS);
    for (const { upstream } of report!.checked) swept.add(upstream);
  }
  expect([...swept].sort()).toEqual([...names].sort());
});

test("a pending schema change with a catastrophic `pattern`: the fit check does not apply the upstream's regular expression to the client's argument", async () => {
  const name = "p-redos";
  const vars = pinVars({ name, pinning: "enforce" });
  const client = await pinClient(`/mcp/${name}`, vars);
  expect(tool(await client.tools(), "echo")).toBeDefined(); // first sight: approved
  await switchVariant(name, "redos");
  const listed = tool(await client.tools(), "echo");
  expect(listed.inputSchema.properties.text.pattern).toBeUndefined(); // clients are shown the approved schema
  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  const echo = pins.definitions.find((d: Json) => d.name === "echo");
  expect(echo.status).toBe("pending");
  expect(echo.pending.definition.inputSchema.properties.text.pattern).toBe("^(a+)+$");
  // "b" breaks the pattern: a check that ran it would refuse the call here; the gateway
  // sends it on (the upstream, which owns the pattern, is the one to judge it).
  const answer = await client.call("echo", { text: "b" });
  expect(JSON.stringify(answer)).not.toContain("the call was not sent");
});

const EVIL = {
  type: "object",
  properties: { q: { type: "string", pattern: "^(a+)+$", format: "email" } },
  patternProperties: { "^(b+)+$": { type: "number" } },
  additionalProperties: false,
};
const NAMED = {
  type: "object",
  properties: { format: { type: "string" }, pattern: { const: { pattern: "x" } } },
  required: ["format"],
  additionalProperties: false,
};

test.each([
  {
    what: "a backtracking pattern is not run on the argument",
    schema: EVIL,
    args: { q: `${"a".repeat(40)}!` },
    fits: true,
  },
  { what: "types are still checked", schema: EVIL, args: { q: 1 }, fits: false },
  {
    what: "patternProperties (and the additionalProperties beside it) are not applied",
    schema: EVIL,
    args: { bbbb: "x" },
    fits: true,
  },
  {
    what: "properties named format and pattern stay, const values are kept whole",
    schema: NAMED,
    args: { format: "x", pattern: { pattern: "x" } },
    fits: true,
  },
  { what: "a required property named format is still required", schema: NAMED, args: {}, fits: false },
])("the fit check: $what", async ({ schema, args, fits }) => {
  const approved = { name: "t", inputSchema: { type: "object" } };
  const misfit = await argumentsMisfit("tool", approved, { name: "t", inputSchema: schema }, args);
  if (fits) expect(misfit).toBeUndefined();
  else expect(misfit).toContain("the changed definition");
});

test.each([
  { value: { b: 1, a: [true, null] }, text: '{"a":[true,null],"b":1}' },
  { value: { z: {}, y: [], x: [[{ 'q"': "\n" }], 2.5] }, text: '{"x":[[{"q\\"":"\\n"}],2.5],"y":[],"z":{}}' },
  { value: [undefined, "s", { u: undefined }], text: '[null,"s",{"u":null}]' },
  {
    value: JSON.parse(`${"[".repeat(20_000)}${"]".repeat(20_000)}`),
    text: `${"[".repeat(20_000)}${"]".repeat(20_000)}`,
  },
])("canonical JSON, without recursion: %#", ({ value, text }) => {
  expect(canonicalJson(value)).toBe(text);
});

/**
 * The Cron Trigger's re-check of pins, run as workerd runs it (the Worker's `scheduled`
 * export with a scheduled controller): a change is found with no client traffic, and an
 * upstream it cannot reach is reported.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, test } from "vitest";
import worker from "../src/index";
import { admin } from "./helpers/admin";
import type { Json } from "./helpers/gateway";
import { pinClient, pinVars, switchVariant, tool } from "./helpers/pins";

async function runCron(vars: Record<string, unknown>): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled!(createScheduledController({ scheduledTime: new Date(), cron: "*/5 * * * *" }), { ...env, ...vars } as never, ctx);
  await waitOnExecutionContext(ctx);
}

test("the scheduled re-check finds a rug pull that no client listed, and reports an upstream it cannot reach", async () => {
  const name = "p-cron";
  const base = pinVars({ name, pinning: "enforce" });
  const upstreams = [...JSON.parse(base["UPSTREAMS"] as string), { name: "p-cron-down", url: "http://127.0.0.1:9/mcp", pinning: "warn", timeoutMs: 2_000 }];
  const vars = { ...base, UPSTREAMS: JSON.stringify(upstreams) };

  await runCron(vars); // first sight: trusted, by the cron alone
  await switchVariant(name, "rug-pull");
  await runCron(vars); // no client has listed since

  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  const add = pins.definitions.find((d: Json) => d.name === "add");
  expect(add.status).toBe("pending");
  expect(add.approved.definition.description).toBe("Adds two numbers");
  expect(add.pending.definition.description).toContain("<IMPORTANT>");
  expect(pins.definitions.find((d: Json) => d.kind === "prompt" && d.name === "greet")).toMatchObject({ status: "pinned" });

  const all = await (await admin("GET", "/pins", undefined, { vars })).json<Json>();
  expect(all.lastSweep.checked).toEqual(expect.arrayContaining([expect.objectContaining({ upstream: name, tools: 2, prompts: 1, changes: 1 })]));
  expect(all.lastSweep.unreachable).toEqual([expect.objectContaining({ upstream: "p-cron-down" })]);

  // The first client to list after the change is shown the approved definition.
  const client = await pinClient(`/mcp/${name}`, vars);
  expect(tool(await client.tools(), "add").description).toBe("Adds two numbers");
});

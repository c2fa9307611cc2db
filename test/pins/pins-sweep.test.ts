/**
 * The Cron Trigger's re-check of pins, run as workerd runs it (the Worker's `scheduled`
 * export with a scheduled controller): a change is found with no client traffic, and an
 * upstream it cannot reach is reported.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, test } from "vitest";
import worker from "../../src/index";
import { admin } from "../helpers/admin";
import type { Json } from "../helpers/gateway";
import { pinClient, pinVars, switchVariant, tool } from "../helpers/pins";
import { SWEEP_REPORT_REFRESH_MS } from "../../src/features/pins/pin-sweep";
import { SWEEP_REPORT_KEY } from "../../src/features/pins/pin-store";

async function runCron(vars: Record<string, unknown>, scheduledTime = new Date()): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled!(
    createScheduledController({ scheduledTime, cron: "*/5 * * * *" }),
    { ...env, ...vars } as never,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

/** The test KV, counting writes of the sweep's report. */
function countingReportWrites(): { kv: KVNamespace; writes: () => number } {
  let writes = 0;
  const kv = env.GATEWAY_KV;
  const counting = new Proxy(kv, {
    get(target, property) {
      if (property === "put") {
        return (key: string, ...rest: unknown[]) => {
          if (key === SWEEP_REPORT_KEY) writes++;
          return (target.put as (...args: unknown[]) => Promise<void>)(key, ...rest);
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: counting, writes: () => writes };
}

test("a run whose report says what the stored one says writes nothing, until the stored one is an hour old; with nothing pinned, a run does nothing", async () => {
  const name = "p-cron-quiet";
  const { kv, writes } = countingReportWrites();
  const vars = { ...pinVars({ name, pinning: "warn" }), GATEWAY_KV: kv };
  const t0 = Date.parse("2026-11-24T10:00:00Z");
  const at = (minutes: number) => new Date(t0 + minutes * 60_000);
  await runCron(vars, at(0)); // first sight: the report counts three new definitions
  await runCron(vars, at(5)); // no changes: a report that differs from the first
  expect(writes()).toBe(2);
  await runCron(vars, at(10)); // the same again: nothing written
  expect(writes()).toBe(2);
  await switchVariant(name, "rug-pull");
  await runCron(vars, at(15)); // a change: written
  await runCron(vars, at(20)); // steady again, but not the report stored: written
  await runCron(vars, at(25)); // steady: nothing written
  expect(writes()).toBe(4);
  await runCron(vars, new Date(at(20).getTime() + SWEEP_REPORT_REFRESH_MS)); // the stored one is an hour old: written again
  expect(writes()).toBe(5);
  await runCron(
    { ...vars, UPSTREAMS: JSON.stringify([{ name, url: "http://127.0.0.1:9/mcp", pinning: "off" }]) },
    new Date(t0 + 3 * SWEEP_REPORT_REFRESH_MS),
  );
  expect(writes()).toBe(5);
});

test("the scheduled re-check finds a rug pull that no client listed, and reports an upstream it cannot reach", async () => {
  const name = "p-cron";
  const base = pinVars({ name, pinning: "enforce" });
  const upstreams = [
    ...JSON.parse(base["UPSTREAMS"] as string),
    { name: "p-cron-down", url: "http://127.0.0.1:9/mcp", pinning: "warn", timeoutMs: 2_000 },
  ];
  const vars = { ...base, UPSTREAMS: JSON.stringify(upstreams) };

  await runCron(vars); // first sight: trusted, by the cron alone
  await switchVariant(name, "rug-pull");
  await runCron(vars); // no client has listed since

  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  const add = pins.definitions.find((d: Json) => d.name === "add");
  expect(add.status).toBe("pending");
  expect(add.approved.definition.description).toBe("Adds two numbers");
  expect(add.pending.definition.description).toContain("<IMPORTANT>");
  expect(pins.definitions.find((d: Json) => d.kind === "prompt" && d.name === "greet")).toMatchObject({
    status: "pinned",
  });

  const all = await (await admin("GET", "/pins", undefined, { vars })).json<Json>();
  expect(all.lastSweep.checked).toEqual(
    expect.arrayContaining([expect.objectContaining({ upstream: name, tools: 2, prompts: 1, changes: 1 })]),
  );
  expect(all.lastSweep.unreachable).toEqual([expect.objectContaining({ upstream: "p-cron-down" })]);

  // The first client to list after the change is shown the approved definition.
  const client = await pinClient(`/mcp/${name}`, vars);
  expect(tool(await client.tools(), "add").description).toBe("Adds two numbers");
});

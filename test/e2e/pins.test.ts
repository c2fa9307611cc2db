/**
 * End to end: tool pinning in `enforce` with the SDK's Client, against the gateway started
 * as README says. After the upstream rug-pulls a tool (its description gains orders for
 * the model), the client still lists the approved definition and its calls still work;
 * the operator sees the pending change and approves it by digest. The Cron Trigger, run
 * by wrangler dev on GET /__scheduled, sees the next change with no client traffic.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startPinsUpstream } from "../fixtures/pins-upstream.ts";

const ADMIN_TOKEN = "e2e-pins-admin-token-0123456789ab";
const UPSTREAM = "pinned";

describe("a rug pull in enforce mode", () => {
  let upstream: Awaited<ReturnType<typeof startPinsUpstream>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  const adminFetch = (method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  beforeAll(async () => {
    upstream = await startPinsUpstream();
    const vars = {
      UPSTREAMS: [{ name: UPSTREAM, url: `${upstream.url}/${UPSTREAM}/mcp`, pinning: "enforce" }],
      ADMIN_TOKEN,
    };
    // --test-scheduled: wrangler dev runs the Cron Trigger's handler on GET /__scheduled.
    gateway = await startGateway({
      port: await freePort(),
      vars,
      persistTo: ".wrangler/e2e-pins",
      extraArgs: ["--test-scheduled"],
    });
    await adminFetch("DELETE", `/pins/${UPSTREAM}`); // local state persists between runs
  });
  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it("keeps listing and calling the approved definition until an operator approves the change", async () => {
    const client = new Client({ name: "e2e-pins", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    const approved = (await client.listTools()).tools.find((t) => t.name === `${UPSTREAM}___add`);
    expect(approved?.description).toBe("Adds two numbers");

    await fetch(`${upstream.url}/${UPSTREAM}/variant/rug-pull`, { method: "POST" });
    const listed = (await client.listTools()).tools.find((t) => t.name === `${UPSTREAM}___add`);
    expect(listed).toEqual(approved);
    const called = await client.callTool({ name: `${UPSTREAM}___add`, arguments: { a: 20, b: 22 } });
    expect(called.isError).toBeFalsy();
    expect((called.content as { text: string }[])[0]!.text).toBe("42");

    const pins = (await (await adminFetch("GET", `/pins/${UPSTREAM}`)).json()) as {
      definitions: { name: string; status: string; pending?: { digest: string; findings: { rule: string }[] } }[];
    };
    const add = pins.definitions.find((d) => d.name === "add")!;
    expect(add.status).toBe("pending");
    expect(add.pending!.findings.map((f) => f.rule)).toContain("instruction-tag");
    expect((await adminFetch("POST", `/pins/${UPSTREAM}/add/approve`, { digest: add.pending!.digest })).status).toBe(
      200,
    );
    expect((await client.listTools()).tools.find((t) => t.name === `${UPSTREAM}___add`)?.description).toContain(
      "<IMPORTANT>",
    );
    await client.close();
  });

  it("the Cron Trigger sees the next change with no client listing", async () => {
    await fetch(`${upstream.url}/${UPSTREAM}/variant/schema`, { method: "POST" });
    const run = await fetch(`${gateway.url}/__scheduled?cron=${encodeURIComponent("*/5 * * * *")}`);
    expect(run.status).toBe(200);
    const pins = (await (await adminFetch("GET", "/pins")).json()) as {
      upstreams: { upstream: string; pending: number }[];
      lastSweep: { checked: { upstream: string }[] };
    };
    expect(pins.lastSweep.checked.map((c) => c.upstream)).toContain(UPSTREAM);
    expect(pins.upstreams.find((u) => u.upstream === UPSTREAM)?.pending).toBe(1);
  });
});

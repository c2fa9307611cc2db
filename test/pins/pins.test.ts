/**
 * Tool pinning through the Worker, against a real SDK upstream that changes its
 * definitions between calls (test/fixtures/pins-upstream.ts): each attack in warn and in
 * enforce, approval and rejection by digest, an approval of an older digest refused,
 * both routes and both client eras, and what a list costs in KV reads.
 */
import { describe, expect, inject, test } from "vitest";
import { env } from "cloudflare:workers";
import { admin } from "../helpers/admin";
import { initialize, messages, post, request, type Json } from "../helpers/gateway";
import { modern } from "../helpers/modern";
import { pinClient, pinVars, switchVariant, tool } from "../helpers/pins";
import { AUDIT_ADMIN_TOKEN, eventsOnceWritten } from "../helpers/audit";
import { admin as authAdmin, authVars, makeKey } from "../helpers/auth";

type Attack = {
  variant: string;
  /** The definition that changes (absent: removal and new tools are checked by name). */
  changed?: string;
  /** Findings the changed version must have. */
  findings?: string[];
  /** A call that fits both versions, with its answer, or that the changed schema refuses. */
  call?: { name: string; args: Record<string, unknown>; fitsBoth: boolean; answer?: string };
  withBeta?: boolean;
};

const ATTACKS: Attack[] = [
  {
    variant: "rug-pull",
    changed: "add",
    findings: ["instruction-tag", "conceal-from-user", "sensitive-files"],
    call: { name: "add", args: { a: 1, b: 2 }, fitsBoth: true, answer: "3" },
  },
  { variant: "schema", changed: "add", findings: [], call: { name: "add", args: { a: 1, b: 2 }, fitsBoth: false } },
  {
    variant: "unicode",
    changed: "echo",
    findings: ["unicode-tag-characters"],
    call: { name: "echo", args: { text: "hi" }, fitsBoth: true },
  },
  { variant: "shadowing", changed: "echo", findings: ["shadowing"], withBeta: true },
];

async function pinsOf(name: string, vars = pinVars({ name })): Promise<Json> {
  const response = await admin("GET", `/pins/${name}`, undefined, { vars });
  expect(response.status).toBe(200);
  return response.json();
}

function definition(pins: Json, name: string): Json {
  return pins.definitions.find((d: Json) => d.name === name && d.kind === "tool");
}

describe.each(["warn", "enforce"] as const)("pinning %s", (mode) => {
  test.each(ATTACKS)("$variant: the change is reported; the list shows what the mode says", async (attack) => {
    const name = `p-${attack.variant}-${mode}`;
    const vars = pinVars({ name, pinning: mode, withBeta: attack.withBeta });
    const client = await pinClient(`/mcp/${name}`, vars);
    const before = tool(await client.tools(), attack.changed!);
    await switchVariant(name, attack.variant);
    const after = tool(await client.tools(), attack.changed!);

    const pins = await pinsOf(name);
    const pin = definition(pins, attack.changed!);
    expect(pin.status).toBe("pending");
    expect(pin.pending.digest).not.toBe(pin.approved.digest);
    expect(pin.pending.findings.map((f: Json) => f.rule)).toEqual(expect.arrayContaining(attack.findings!));
    expect(pin.pending.diff.changes.length).toBeGreaterThan(0);
    if (mode === "warn") expect(after).not.toEqual(before);
    else expect(after).toEqual(before); // the approved definition, byte for byte as first listed

    if (attack.call) {
      const answer = await client.call(attack.call.name, attack.call.args);
      if (attack.call.fitsBoth) {
        expect(answer.result.isError).toBeFalsy();
        if (attack.call.answer) expect(answer.result.content[0].text).toBe(attack.call.answer);
      } else if (mode === "warn") {
        // Sent on: the upstream's new schema refuses it, not the gateway.
        expect(answer.result.isError).toBe(true);
        expect(answer.result.content[0].text).not.toContain("pending change");
      } else {
        expect(answer.result.isError).toBe(true);
        expect(answer.result.content[0].text).toContain(pin.pending.digest);
        expect(answer.result.content[0].text).toContain("pending change");
      }
    }
    const upstreams = await (await admin("GET", "/upstreams", undefined, { vars })).json<Json>();
    const entry = upstreams.upstreams.find((u: Json) => u.name === name);
    expect(entry.pins).toMatchObject({ mode, pending: 1 });
    expect(entry.pins.changes).toEqual([{ kind: "tool", name: attack.changed, status: "pending" }]);
  });

  test("removal is reported; the list no longer has the tool", async () => {
    const name = `p-removal-${mode}`;
    const vars = pinVars({ name, pinning: mode });
    const client = await pinClient(`/mcp/${name}`, vars);
    expect(tool(await client.tools(), "echo")).toBeDefined();
    await switchVariant(name, "removal");
    expect(tool(await client.tools(), "echo")).toBeUndefined();
    const pin = definition(await pinsOf(name), "echo");
    expect(pin.removedAt).toEqual(expect.any(String));
    expect(pin.status).toBe("pinned");
  });

  test.each([false, true])("a new tool (approveNew %s)", async (approveNew) => {
    const name = `p-new-${mode}-${approveNew ? "held" : "tofu"}`;
    const vars = pinVars({ name, pinning: mode, approveNew });
    await switchVariant(name, "base");
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    await switchVariant(name, "new-tool");
    const listed = tool(await client.tools(), "notes");
    const pin = definition(await pinsOf(name, vars), "notes");
    // approveNew holds every first sight, the tools listed at the start as well.
    expect(pin.status).toBe(approveNew ? "held" : "pinned");
    if (approveNew && mode === "enforce") {
      expect(listed).toBeUndefined();
      const answer = await client.call("notes", { note: "x" });
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content[0].text).toContain("held for an operator's approval");
    } else {
      expect(listed).toBeDefined();
      expect((await client.call("notes", { note: "x" })).result.content[0].text).toBe("noted x");
    }
  });
});

test.each(["warn", "enforce"] as const)("first sight with a high-severity finding: %s", async (mode) => {
  const name = `p-first-finding-${mode}`;
  const vars = pinVars({ name, pinning: mode });
  await switchVariant(name, "unicode"); // echo's very first version hides tag characters
  const client = await pinClient(`/mcp/${name}`, vars);
  const echo = tool(await client.tools(), "echo");
  const pin = definition(await pinsOf(name, vars), "echo");
  expect((pin.pending ?? pin.approved).findings.map((f: Json) => f.rule)).toContain("unicode-tag-characters");
  if (mode === "warn") {
    expect(pin.status).toBe("pinned");
    expect(echo).toBeDefined();
  } else {
    expect(pin.status).toBe("held"); // held like a change: never listed, never called
    expect(echo).toBeUndefined();
    expect((await client.call("echo", { text: "hi" })).result.content[0].text).toContain(
      "held for an operator's approval",
    );
  }
});

describe("decisions by digest", () => {
  test("approve: the changed definition becomes what clients see and call", async () => {
    const name = "p-approve";
    const vars = pinVars({ name, pinning: "enforce" });
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    await switchVariant(name, "schema");
    expect(tool(await client.tools(), "add").inputSchema.required).toEqual(["a", "b"]);
    const pending = definition(await pinsOf(name), "add").pending;
    expect(pending.diff.changes).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "/inputSchema/properties/c", change: "added" })]),
    );
    const approved = await admin("POST", `/pins/${name}/add/approve`, { digest: pending.digest }, { vars });
    expect(approved.status).toBe(200);
    expect((await approved.json<Json>()).status).toBe("pinned");
    expect(tool(await client.tools(), "add").inputSchema.required).toEqual(["a", "b", "c"]);
    expect((await client.call("add", { a: 1, b: 2, c: 3 })).result.content[0].text).toBe("6");
  });

  test("reject: the approved definition stays; the rejected version is never shown", async () => {
    const name = "p-reject";
    const vars = pinVars({ name, pinning: "enforce" });
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    await switchVariant(name, "schema");
    await client.tools();
    const pending = definition(await pinsOf(name), "add").pending;
    const rejected = await admin("POST", `/pins/${name}/add/reject`, { digest: pending.digest }, { vars });
    expect(rejected.status).toBe(200);
    expect((await rejected.json<Json>()).status).toBe("rejected");
    expect(tool(await client.tools(), "add").inputSchema.required).toEqual(["a", "b"]);
    const refused = await client.call("add", { a: 1, b: 2 });
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0].text).toContain("rejected");
  });

  test("an approval of an older digest than the pending one is refused with 409, at once with the current one", async () => {
    const name = "p-race";
    const vars = pinVars({ name, pinning: "enforce" });
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    await switchVariant(name, "schema");
    await client.tools();
    const seen = definition(await pinsOf(name), "add").pending.digest;
    await switchVariant(name, "rug-pull"); // the upstream changes again before the operator decides
    await client.tools();
    const current = definition(await pinsOf(name), "add").pending.digest;
    expect(current).not.toBe(seen);
    const [older, newer] = await Promise.all([
      admin("POST", `/pins/${name}/add/approve`, { digest: seen }, { vars }),
      admin("POST", `/pins/${name}/add/approve`, { digest: current }, { vars }),
    ]);
    expect(older.status).toBe(409);
    expect(await older.json()).toMatchObject({ current });
    expect(newer.status).toBe(200);
    expect(definition(await pinsOf(name), "add")).toMatchObject({ status: "pinned", approved: { digest: current } });
  });

  test("decisions about two definitions of one upstream at once both stand (each read, changed and wrote back the one document)", async () => {
    const name = "p-two-decisions";
    const vars = pinVars({ name, pinning: "enforce", approveNew: true });
    await (await pinClient(`/mcp/${name}`, vars)).tools();
    const held = await pinsOf(name, vars);
    const [add, echo] = [definition(held, "add"), definition(held, "echo")];
    expect([add.status, echo.status]).toEqual(["held", "held"]);
    const answers = await Promise.all([
      admin("POST", `/pins/${name}/add/approve`, { digest: add.pending.digest }, { vars }),
      admin("POST", `/pins/${name}/echo/approve`, { digest: echo.pending.digest }, { vars }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const after = await pinsOf(name, vars);
    expect(definition(after, "add").status).toBe("pinned");
    expect(definition(after, "echo").status).toBe("pinned");
  });

  test("DELETE /admin/pins/<name> of a name neither configured nor pinned is 404; a removed upstream's pins can still be forgotten", async () => {
    const name = "p-forget-removed";
    const vars = pinVars({ name, pinning: "warn" });
    await (await pinClient(`/mcp/${name}`, vars)).tools();
    const without = { ...vars, UPSTREAMS: JSON.stringify([{ name: "beta", url: inject("fixtureUrls").beta }]) };
    expect((await admin("DELETE", `/pins/p-typo-${name}`, undefined, { vars: without })).status).toBe(404);
    expect((await admin("DELETE", `/pins/${name}`, undefined, { vars: without })).status).toBe(200);
    expect((await admin("DELETE", `/pins/${name}`, undefined, { vars: without })).status).toBe(404);
  });

  test("bad bodies are refused with 400, unknown definitions with 404; DELETE forgets", async () => {
    const name = "p-forget";
    const vars = pinVars({ name, pinning: "enforce" });
    await (await pinClient(`/mcp/${name}`, vars)).tools();
    expect((await admin("POST", `/pins/${name}/add/approve`, { nope: 1 }, { vars })).status).toBe(400);
    expect((await admin("POST", `/pins/${name}/missing/approve`, { digest: "sha256:x" }, { vars })).status).toBe(404);
    expect((await admin("DELETE", `/pins/${name}/add?kind=tool`, undefined, { vars })).status).toBe(200);
    expect(definition(await pinsOf(name), "add")).toBeUndefined();
    expect(definition(await pinsOf(name), "echo")).toBeDefined();
  });
});

describe("routes, eras, prompts, logs", () => {
  test("on /mcp a 2026-07-28 client is shown the approved definition under its aggregated name", async () => {
    const name = "p-modern";
    const vars = pinVars({ name, pinning: "enforce" });
    const list = async () => (await modern("/mcp", "tools/list", {}, { vars })).result.tools as Json[];
    const before = tool(await list(), `${name}___add`);
    await switchVariant(name, "rug-pull");
    const after = tool(await list(), `${name}___add`);
    expect(after).toEqual(before);
    expect(after.description).toBe("Adds two numbers");
    const called = await modern("/mcp", "tools/call", { name: `${name}___add`, arguments: { a: 2, b: 2 } }, { vars });
    expect(called.result.content[0].text).toBe("4");
  });

  test("a changed prompt is held like a tool in enforce", async () => {
    const name = "p-prompt";
    const vars = pinVars({ name, pinning: "enforce" });
    const client = await pinClient(`/mcp/${name}`, vars);
    const before = (await client.prompts()).find((p) => p.name === "greet");
    await switchVariant(name, "prompt-change");
    expect((await client.prompts()).find((p) => p.name === "greet")).toEqual(before);
    const pins = await pinsOf(name);
    const pin = pins.definitions.find((d: Json) => d.kind === "prompt");
    expect(pin).toMatchObject({ status: "pending" });
    expect(pin.pending.findings.map((f: Json) => f.rule)).toContain("override-instructions");
    // Its arguments fit both versions: the prompt is served; an argument neither declares is refused, naming the change.
    const got = await request(
      `/mcp/${name}`,
      client.session,
      "prompts/get",
      { name: "greet", arguments: { name: "Ada" } },
      { vars },
    );
    expect(got.result.messages[0].content.text).toBe("Hello Ada");
    const refused = await request(
      `/mcp/${name}`,
      client.session,
      "prompts/get",
      { name: "greet", arguments: { name: "Ada", extra: "x" } },
      { vars },
    );
    expect(refused.error).toMatchObject({ code: -32602, message: expect.stringContaining(pin.pending.digest) });
  });

  test("a client that asked for log messages is told which definitions are not approved", async () => {
    const name = "p-logs";
    const vars = pinVars({ name, pinning: "enforce" });
    const { session } = await initialize(`/mcp/${name}`, { vars });
    await request(`/mcp/${name}`, session, "tools/list", {}, { vars });
    await switchVariant(name, "schema");
    await request(`/mcp/${name}`, session, "logging/setLevel", { level: "warning" }, { vars });
    const all = await messages(
      await post(`/mcp/${name}`, { jsonrpc: "2.0", id: 9, method: "tools/list" }, { session, vars }),
    );
    const log = all.find((m) => m.method === "notifications/message");
    expect(log.params.level).toBe("warning");
    expect(log.params.data.unsettled).toEqual([
      expect.objectContaining({ upstream: name, name: "add", status: "pending" }),
    ]);
  });

  test("pinning off: lists pass, nothing is stored", async () => {
    const name = "p-off";
    const vars = pinVars({ name, pinning: "off" });
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    await switchVariant(name, "rug-pull");
    expect(tool(await client.tools(), "add").description).toContain("<IMPORTANT>");
    expect(await env.GATEWAY_KV.get(`pins/${name}`)).toBeNull();
  });
});

describe("personas", () => {
  test("a changed definition is shown to no persona as the upstream now serves it, however much the persona allows", async () => {
    const name = "p-personas";
    const vars = { ...pinVars({ name, pinning: "enforce", approveNew: false }), ...authVars() };
    expect((await authAdmin("PUT", "/personas/pins-all", { roles: ["pins-all"], allow: ["*"] }, vars)).status).toBe(
      200,
    );
    expect(
      (await authAdmin("PUT", "/personas/pins-add", { roles: ["pins-add"], allow: [`${name}___add`] }, vars)).status,
    ).toBe(200);
    const listAs = async (role: string) => {
      const { headers } = await makeKey({ principal: `pins-${role}`, roles: [role] }, vars);
      const { session } = await initialize(`/mcp/${name}`, { vars, headers });
      return (await request(`/mcp/${name}`, session, "tools/list", {}, { vars, headers })).result.tools as Json[];
    };
    const before = tool(await listAs("pins-all"), "add");
    await switchVariant(name, "rug-pull");
    expect(tool(await listAs("pins-all"), "add")).toEqual(before);
    const narrow = await listAs("pins-add");
    expect(narrow.map((t) => t.name).filter((n) => !n.startsWith("sys___"))).toEqual(["add"]);
    expect(tool(narrow, "add")).toEqual(before);
  });
});

describe("audit", () => {
  test("one event per change: old and new digest, the members that changed, the findings; the baseline list sends none", async () => {
    const name = "p-audit";
    const sent: Json[] = [];
    let changed: () => void = () => {};
    const arrived = new Promise<void>((resolve) => (changed = resolve));
    const queue = {
      send: async () => {},
      sendBatch: async (messages: { body: Json }[]) => {
        const pins = messages.map((m) => m.body).filter((e) => e["mcp.method.name"] === "(pin-change)");
        sent.push(...pins);
        if (pins.some((e) => e["gateway.pin.change"] === "changed")) changed();
      },
    };
    const vars = { ...pinVars({ name, pinning: "warn" }), AUDIT_QUEUE: queue };
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    await client.prompts();
    expect(sent).toEqual([]);
    await switchVariant(name, "rug-pull");
    await client.tools();
    await arrived;
    const pin = definition(await pinsOf(name), "add");
    expect(sent).toEqual([
      expect.objectContaining({
        "gateway.upstream": name,
        "gateway.pin.change": "changed",
        "gateway.pin.name": "add",
        "gateway.pin.old_digest": pin.approved.digest,
        "gateway.pin.new_digest": pin.pending.digest,
        "gateway.pin.changed_members": ["description"],
        "gateway.pin.status": "pending",
        "gateway.pin.findings": expect.arrayContaining([
          expect.objectContaining({ rule: "instruction-tag", severity: "high" }),
        ]),
      }),
    ]);
  });
});

/** The tools the fixture's `many-new` variant adds (MANY_NEW_TOOLS of test/fixtures/pins-upstream.ts, a Node module). */
const MANY_NEW_TOOLS = 120;

describe("audit through the real Queue", () => {
  test("a list with more changes than one sendBatch takes reports every one (they were sent in one batch, refused whole)", async () => {
    const name = "p-audit-many";
    const vars = { ...pinVars({ name, pinning: "warn" }), ADMIN_TOKEN: AUDIT_ADMIN_TOKEN };
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    await switchVariant(name, "many-new");
    expect((await client.tools()).filter((t) => t.name.startsWith("extra_"))).toHaveLength(MANY_NEW_TOOLS);
    const events = await eventsOnceWritten(`upstream=${name}&limit=1000`, MANY_NEW_TOOLS);
    const added = events.filter((e) => e["mcp.method.name"] === "(pin-change)" && e["gateway.pin.change"] === "new");
    expect(new Set(added.map((e) => e["gateway.pin.name"])).size).toBe(MANY_NEW_TOOLS);
  });
});

/** The test KV, counting the reads and writes of pins documents. */
function countingKv() {
  const counts = { reads: 0, writes: 0 };
  const kv = env.GATEWAY_KV;
  const pins = (key: string) => key.startsWith("pins/") || key.startsWith("pin-decisions/");
  const counting = {
    get: (key: string, ...rest: unknown[]) => {
      if (pins(key)) counts.reads++;
      return (kv.get as (...args: unknown[]) => unknown)(key, ...rest);
    },
    put: (key: string, ...rest: unknown[]) => {
      if (pins(key)) counts.writes++;
      return (kv.put as (...args: unknown[]) => unknown)(key, ...rest);
    },
    delete: kv.delete.bind(kv),
    list: kv.list.bind(kv),
    getWithMetadata: kv.getWithMetadata.bind(kv),
  };
  return { counts, kv: counting };
}

describe("cost", () => {
  test("KV reads and writes per list: the first list of an upstream reads its two documents and writes once; the next reads and writes nothing", async () => {
    const name = "p-cost";
    const { counts, kv } = countingKv();
    const vars = { ...pinVars({ name, pinning: "enforce" }), GATEWAY_KV: kv };
    const client = await pinClient(`/mcp/${name}`, vars);
    await client.tools();
    expect(counts).toEqual({ reads: 2, writes: 1 });
    await client.tools();
    await client.tools();
    expect(counts).toEqual({ reads: 2, writes: 1 });
    await switchVariant(name, "rug-pull");
    await client.tools();
    expect(counts).toEqual({ reads: 2, writes: 2 });
  });

  test("a 2026-07-28 upstream listed by 2025 and 2026-07-28 clients in turn: pins are written once, not at every switch of era", async () => {
    const { counts, kv } = countingKv();
    const name = "p-eras";
    const vars = {
      UPSTREAMS: JSON.stringify([{ name, url: inject("modernUpstreamUrl"), pinning: "warn" }]),
      GATEWAY_KV: kv,
    };
    const client = await pinClient(`/mcp/${name}`, vars);
    for (let round = 0; round < 3; round++) {
      expect(tool(await client.tools(), "shape").outputSchema).toBeUndefined(); // what a 2025 client cannot read is left out
      expect(
        tool((await modern(`/mcp/${name}`, "tools/list", {}, { vars })).result.tools, "shape").outputSchema,
      ).toBeDefined();
    }
    expect(counts.writes).toBe(1);
  });
});

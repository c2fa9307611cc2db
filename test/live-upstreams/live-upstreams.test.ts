/**
 * Upstreams added, changed and removed through the admin API while the gateway runs
 * (src/features/live-upstreams/): listed and callable on the next request with no restart,
 * declared ones read-only, bad ones refused with located problems, a stored credential
 * sent upstream and shown nowhere else. Real SDK upstreams on loopback; the admin calls
 * reach the gateway on a loopback host, as under `npm start`, where http loopback
 * upstreams are allowed.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it, vi } from "vitest";
import { inject } from "vitest";
import { gatewayFetch, initialize, request, type Json, type Vars } from "../helpers/gateway";
import { AUDIT_ADMIN_TOKEN, eventsOnceWritten } from "../helpers/audit";

const LOCAL = "http://127.0.0.1:8787";
const CREDENTIAL = `live-credential-${crypto.randomUUID()}`;
const WORKER_SECRET = `worker-secret-${crypto.randomUUID()}`;
const VARS: Vars = { ADMIN_TOKEN: AUDIT_ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "0", LIVE_TEST_SECRET: WORKER_SECRET };
const { alpha, beta } = inject("fixtureUrls");
/** Every admin answer's text, searched for the credential at the end. */
const answers: string[] = [];

type Answer = { status: number; body: Json };

async function adminCall(method: string, path: string, body?: unknown, origin = LOCAL): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${AUDIT_ADMIN_TOKEN}` };
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await gatewayFetch(`${origin}/admin${path}`, init, VARS);
  const text = await response.text();
  answers.push(text);
  return { status: response.status, body: JSON.parse(text) };
}

async function toolNames(path: string): Promise<string[]> {
  const { session } = await initialize(`${LOCAL}${path}`, { vars: VARS });
  const listed = await request(`${LOCAL}${path}`, session, "tools/list", {}, { vars: VARS });
  return (listed.result.tools as { name: string }[]).map((t) => t.name);
}

async function callTool(path: string, name: string, args: unknown = {}): Promise<Json> {
  const { session } = await initialize(`${LOCAL}${path}`, { vars: VARS });
  return request(`${LOCAL}${path}`, session, "tools/call", { name, arguments: args }, { vars: VARS });
}

const withCredential = (credential: unknown) => ({ url: alpha, credential });
const name = (base: string) => `${base}${crypto.randomUUID().slice(0, 6)}`;

describe("live upstreams", () => {
  afterAll(async () => {
    await (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV.delete("live-upstreams");
  });

  it("adds, changes and removes an upstream, each effective on the next request", async () => {
    const live = name("live");
    const added = await adminCall("PUT", `/upstreams/${live}`, { url: alpha });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ name: live, source: "live", created: true, probe: { ok: true } });
    expect(added.body.probe.toolNames).toContain("whoami");
    expect(added.body.probe.tools).toBeGreaterThan(5);

    expect(await toolNames("/mcp")).toContain(`${live}___whoami`);
    expect(await toolNames(`/mcp/${live}`)).toContain("whoami");
    const echoed = await callTool(`/mcp`, `${live}___echo`, { text: "hi there" });
    expect(echoed.result.content[0].text).toContain("hi there");
    const listed = await adminCall("GET", "/upstreams");
    expect(listed.body.upstreams).toContainEqual(expect.objectContaining({ name: live, source: "live" }));
    expect(listed.body.upstreams).toContainEqual(expect.objectContaining({ name: "alpha", source: "declared" }));
    const shown = await adminCall("GET", `/upstreams/${live}`);
    expect(shown.body).toEqual({ name: live, source: "live", upstream: { url: alpha } });

    const changed = await adminCall("PUT", `/upstreams/${live}`, { url: beta });
    expect(changed.status).toBe(200);
    expect(changed.body.created).toBe(false);
    const after = await toolNames(`/mcp/${live}`);
    expect(after).toContain("echo");
    expect(after).not.toContain("whoami"); // beta has no whoami: the new URL is the one called

    expect((await adminCall("DELETE", `/upstreams/${live}`)).body).toEqual({ deleted: live });
    expect(await toolNames("/mcp")).not.toContain(`${live}___echo`);
    await expect(initialize(`${LOCAL}/mcp/${live}`, { vars: VARS })).rejects.toThrow(/404 .*no upstream named/);
    expect((await adminCall("GET", `/upstreams/${live}`)).status).toBe(404);
    expect((await adminCall("DELETE", `/upstreams/${live}`)).status).toBe(404);
  });

  it("pins a live upstream's tools and counts its health as a declared one's", async () => {
    const live = name("pinned");
    await adminCall("PUT", `/upstreams/${live}`, { url: alpha, pinning: "enforce" });
    expect(await toolNames(`/mcp/${live}`)).toContain("echo");
    const pins = await adminCall("GET", `/pins/${live}`);
    expect(pins.status).toBe(200);
    expect(pins.body).toMatchObject({ upstream: live, mode: "enforce" });
    expect(pins.body.pinned).toBeGreaterThan(5);
    await callTool(`/mcp/${live}`, "echo", { text: "counted" });
    const listed = await adminCall("GET", "/upstreams");
    const health = listed.body.upstreams.find((u: Json) => u.name === live);
    expect(health).toMatchObject({ source: "live", pins: { mode: "enforce" } });
    expect(health.recent.calls).toBeGreaterThan(0);
    await adminCall("DELETE", `/upstreams/${live}`);
  });

  it("serves a valid document another isolate wrote straight into KV on the next request", async () => {
    const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;
    const live = name("written");
    await kv.put("live-upstreams", JSON.stringify({ upstreams: { [live]: { url: beta } } }));
    expect(await toolNames("/mcp")).toContain(`${live}___echo`);
    await kv.delete("live-upstreams");
    expect(await toolNames("/mcp")).not.toContain(`${live}___echo`);
  });

  it("never overwrites or removes a declared upstream", async () => {
    const put = await adminCall("PUT", "/upstreams/alpha", { url: beta });
    expect(put.status).toBe(409);
    expect(put.body.error).toMatch(/declared in UPSTREAMS/);
    expect((await adminCall("DELETE", "/upstreams/alpha")).status).toBe(409);
    const shown = await adminCall("GET", "/upstreams/alpha");
    expect(shown.body).toMatchObject({ name: "alpha", source: "declared", readOnly: true });
    expect(await toolNames("/mcp/alpha")).toContain("whoami"); // still alpha's own
  });

  it.each([
    ["a body that is not JSON or YAML", "{", "", /neither JSON nor YAML/],
    ["not an object", "[1]", "", /must be an object/],
    ["a URL that is not one", { url: 42 }, "/url", /absolute http/],
    ["plain http to a public host", { url: "http://example.com/mcp" }, "/url", /https:\/\//],
    ["an unknown field", { url: alpha, colour: "red" }, "/colour", /unknown field/],
    ["an unknown service binding", { service: "NO_SUCH_WORKER" }, "/service", /no service binding named "NO_SUCH/],
    ["a binding that is not a service", { service: "GATEWAY_KV" }, "/service", /no service binding/],
    ["a secret that is not set", withCredential({ secret: "NO_SUCH" }), "/credential/secret", /no Worker secret/],
    ["the gateway's own secret", withCredential({ secret: "SESSION_SECRET" }), "/credential/secret", /own secret/],
    ["two credential forms", withCredential({ secret: "LIVE_TEST_SECRET", value: "x" }), "/credential", /must be/],
    ["keeping a credential never stored", withCredential({ sealed: true }), "/credential/sealed", /none stored/],
    ["a header the gateway owns", withCredential({ value: "x", header: "Host" }), "/credential/header", /header/],
    ["a name in the body that differs", { name: "other", url: alpha }, "/name", /the name in the path/],
  ])("refuses %s with a located 400 and stores nothing", async (_label, body, path, message) => {
    const live = name("bad");
    const refused = await adminCall("PUT", `/upstreams/${live}`, body);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/nothing was stored/);
    expect(refused.body.problems).toContainEqual({ path, message: expect.stringMatching(message) });
    expect((await adminCall("GET", `/upstreams/${live}`)).status).toBe(404);
  });

  it("refuses a name the gateway does not allow, located", async () => {
    const refused = await adminCall("PUT", "/upstreams/bad___name", { url: alpha });
    expect(refused.status).toBe(400);
    expect(refused.body.problems).toContainEqual({ path: "/name", message: expect.stringMatching(/without '___'/) });
    const reserved = await adminCall("PUT", "/upstreams/sys", { url: alpha });
    expect(reserved.body.problems).toContainEqual({ path: "/name", message: expect.stringMatching(/reserved/) });
  });

  it("allows http loopback upstreams only when the gateway itself is reached on loopback", async () => {
    const live = name("deployed");
    const refused = await adminCall("PUT", `/upstreams/${live}`, { url: alpha }, "https://gateway.example.com");
    expect(refused.status).toBe(400);
    const message = expect.stringMatching(/loopback host, while the gateway itself runs locally/);
    expect(refused.body.problems).toContainEqual({ path: "/url", message });
  });

  it("stores an upstream that does not answer, saying why, unless the probe is required", async () => {
    const live = name("down");
    const required = await adminCall("PUT", `/upstreams/${live}?requireProbe=true`, { url: "http://127.0.0.1:9/mcp" });
    expect(required.status).toBe(422);
    expect(required.body.probe).toMatchObject({ ok: false, stage: "initialize" });
    expect((await adminCall("GET", `/upstreams/${live}`)).status).toBe(404);
    const stored = await adminCall("PUT", `/upstreams/${live}`, { url: "http://127.0.0.1:9/mcp" });
    expect(stored.status).toBe(201);
    expect(stored.body.probe).toMatchObject({ ok: false, stage: "initialize", error: expect.any(String) });
    const skipped = await adminCall("PUT", `/upstreams/${live}?probe=false`, { url: "http://127.0.0.1:9/mcp" });
    expect(skipped.body.probe).toMatch(/skipped/);
    await adminCall("DELETE", `/upstreams/${live}`);
  });

  it("sends a stored credential upstream and shows it in no answer, log line, KV text or audit event", async () => {
    const logged: unknown[] = [];
    const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(...args)),
    );
    const live = name("cred");
    const credential = { value: CREDENTIAL, header: "X-Live-Key", scheme: "" };
    // A failing upstream too: its errors are logged and answered, never with the credential.
    const unreachable = { url: "http://127.0.0.1:9/mcp", credential };
    const down = await adminCall("PUT", `/upstreams/${name("credDown")}`, unreachable);
    expect(down.body.probe.ok).toBe(false);
    const added = await adminCall("PUT", `/upstreams/${live}`, { url: alpha, credential });
    expect(added.status).toBe(201);
    expect(added.body.stored.credential).toEqual({ header: "X-Live-Key", scheme: "", sealed: true });
    expect(added.body.probe.ok).toBe(true);

    const seen = await callTool(`/mcp/${live}`, "whoami");
    expect(JSON.parse(seen.result.content[0].text)["x-live-key"]).toBe(CREDENTIAL);

    // Changed without sending the value again: the stored one is kept.
    const keep = { sealed: true, header: "X-Live-Key", scheme: "" };
    const kept = await adminCall("PUT", `/upstreams/${live}`, { ...withCredential(keep), headers: { "X-Team": "a" } });
    expect(kept.status).toBe(200);
    const again = await callTool(`/mcp/${live}`, "whoami");
    expect(JSON.parse(again.result.content[0].text)).toMatchObject({ "x-live-key": CREDENTIAL, "x-team": "a" });

    await adminCall("GET", `/upstreams/${live}`);
    await adminCall("GET", "/upstreams");
    const stored = await (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV.get("live-upstreams");
    expect(stored).toContain(live);
    expect(stored).not.toContain(CREDENTIAL);
    await adminCall("DELETE", `/upstreams/${live}`);

    const events = await eventsOnceWritten(`upstream=${live}`, 3);
    const methods = events.map((e: Json) => e["mcp.method.name"]);
    expect(methods).toEqual(expect.arrayContaining(["(upstream-create)", "(upstream-change)", "(upstream-remove)"]));
    expect(JSON.stringify(events)).not.toContain(CREDENTIAL);
    for (const text of answers) expect(text).not.toContain(CREDENTIAL);
    for (const spy of spies) spy.mockRestore();
    expect(logged.length).toBeGreaterThan(0);
    const text = (entry: unknown) => (entry instanceof Error ? `${entry.stack}` : JSON.stringify(entry));
    expect(logged.map(text).join("\n")).not.toContain(CREDENTIAL);
  });

  it("applies no document written straight into KV that fails the checks, and says so on the next write", async () => {
    const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;
    const live = name("direct");
    const document = { upstreams: { [live]: { url: alpha, credential: { secret: "SESSION_SECRET" } } } };
    await kv.put("live-upstreams", JSON.stringify(document));
    expect((await toolNames("/mcp")).some((tool) => tool.startsWith(`${live}___`))).toBe(false);
    const put = await adminCall("PUT", `/upstreams/${name("other")}`, { url: alpha });
    expect(put.status).toBe(409);
    const where = `/upstreams/${live}/credential/secret`;
    expect(put.body.error).toContain(`${where}: "SESSION_SECRET" is the gateway's own secret`);
    await kv.delete("live-upstreams");
  });

  it("imports an MCP Registry server.json, asking for what it declares", async () => {
    const live = name("registry");
    const port = new URL(alpha).port;
    const remote = {
      type: "streamable-http",
      url: "http://127.0.0.1:{port}/mcp",
      variables: { port: { description: "The port", isRequired: true } },
      headers: [
        { name: "X-Tenant", value: "team-{tenant}", variables: { tenant: { isRequired: true } } },
        { name: "X-Api-Key", description: "API key", isRequired: true, isSecret: true },
      ],
    };
    const sse = { type: "sse", url: "https://x.example/sse" };
    const server = { name: "com.example/wiki", version: "1.0.0", remotes: [sse, remote] };

    const asked = await adminCall("POST", `/upstreams/${live}/import`, { server });
    expect(asked.status).toBe(400);
    expect(asked.body.needs).toEqual([
      { name: "port", kind: "variable", description: "The port", isRequired: true, isSecret: false },
      { name: "X-Tenant", kind: "header", isRequired: false, isSecret: false },
      { name: "X-Api-Key", kind: "header", description: "API key", isRequired: true, isSecret: true },
    ]);
    const paths = asked.body.problems.map((p: Json) => p.path);
    expect(paths).toEqual(expect.arrayContaining(["/values/port", "/values/tenant", "/values/X-Api-Key"]));

    const values = { port, tenant: "docs", "X-Api-Key": CREDENTIAL };
    const imported = await adminCall("POST", `/upstreams/${live}/import`, { server, values });
    expect(imported.status).toBe(201);
    expect(imported.body.stored).toEqual({
      url: alpha,
      headers: { "X-Tenant": "team-docs" },
      credential: { header: "X-Api-Key", scheme: "", sealed: true },
    });
    expect(imported.body.probe.ok).toBe(true);
    const seen = JSON.parse((await callTool(`/mcp/${live}`, "whoami")).result.content[0].text);
    expect(seen).toMatchObject({ "x-api-key": CREDENTIAL, "x-tenant": "team-docs" });
    await adminCall("DELETE", `/upstreams/${live}`);
    for (const text of answers) expect(text).not.toContain(CREDENTIAL);
  });

  it("refuses a server.json without a streamable-http remote, located", async () => {
    const server = { remotes: [{ type: "sse", url: "https://x.example/sse" }] };
    const refused = await adminCall("POST", `/upstreams/${name("sse")}/import`, { server });
    expect(refused.status).toBe(400);
    const message = expect.stringMatching(/streamable-http/);
    expect(refused.body.problems).toEqual([{ path: "/server/remotes", message }]);
  });

  it("sends a Worker secret named as the credential", async () => {
    const live = name("secret");
    const credential = { secret: "LIVE_TEST_SECRET" };
    const added = await adminCall("PUT", `/upstreams/${live}`, { url: alpha, credential });
    expect(added.status).toBe(201);
    expect(added.body.stored.credential).toEqual({ secret: "LIVE_TEST_SECRET" });
    const seen = await callTool(`/mcp/${live}`, "whoami");
    expect(JSON.parse(seen.result.content[0].text).authorization).toBe(`Bearer ${WORKER_SECRET}`);
    await adminCall("DELETE", `/upstreams/${live}`);
    for (const text of answers) expect(text).not.toContain(WORKER_SECRET);
  });
});

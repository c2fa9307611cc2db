/**
 * The Worker as `wrangler deploy` uploads it: built by `wrangler deploy --dry-run --outdir`
 * (as `npm run deploy -- --dry-run` does) and run in workerd (Miniflare) from exactly the
 * modules in that directory. yaml is not in the main module but in a module of its own
 * (src/storage/yaml-module.mjs, issue 18), imported by name the first time an isolate reads
 * a document that is not JSON; the workerd tests load it through Vite instead, so only
 * this test sees the name the import asks for resolve among the uploaded modules.
 * workers-oauth-provider (AUTH.signIn) is a module of its own the same way
 * (src/storage/oauth-provider-module.mjs).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleModules } from "../../scripts/lib/bundle-modules.mjs";
import { gatewayWorkerOptions } from "../../scripts/lib/worker-options.mjs";
import { startAlpha } from "../fixtures/sdk-upstream.ts";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ADMIN_TOKEN = "e2e-uploaded-modules-admin-token-0123";
const YAML_MODULE = "yaml-module.mjs";
/** A string only yaml's own code holds (its node types are registered symbols). */
const YAML_MARKER = 'Symbol.for("yaml.alias")';
const OAUTH_MODULE = "oauth-provider-module.mjs";
/** A string only workers-oauth-provider's code holds (its warning when CIMD is off). */
const OAUTH_MARKER = "CIMD (Client ID Metadata Document) is disabled";
const JSON_SCHEMA_MODULE = "json-schema-module.mjs";
/** A string only @cfworker/json-schema's code holds (a validation error it writes). */
const JSON_SCHEMA_MARKER = "does not have required property";
const CODE_MODE_MODULE = "code-mode-module.mjs";
/** A string only acorn's code holds (a syntax error it writes), which code mode bundles. */
const CODE_MODE_MARKER = "Shorthand property assignments are valid only in destructuring patterns";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

type Answer = { result?: Record<string, unknown>; error?: unknown };

/** The gateway run in workerd from exactly the modules in `outdir`, with `bindings`. */
function gatewayFrom(outdir: string, bindings: Record<string, string>): Miniflare {
  const { modules } = bundleModules(outdir);
  const worker = {
    name: "gateway",
    ...gatewayWorkerOptions(),
    modules: modules.map((module) => ({ type: module.type, path: module.path })),
    modulesRoot: outdir,
    bindings: { SESSION_SECRET: "e2e-uploaded-modules-session-secret-0123", ...bindings },
  };
  return new Miniflare(convertV4MiniflareOptions({ workers: [worker] }));
}

describe("the modules wrangler uploads", () => {
  let outdir: string;
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let mf: Miniflare;

  /** One JSON-RPC exchange on /mcp/alpha; the answer read from JSON or from SSE. */
  async function rpc(
    body: Record<string, unknown>,
    session?: string,
  ): Promise<{ session: string | null; answer: Answer | undefined }> {
    const response = await mf.dispatchFetch("http://gateway.test/mcp/alpha", {
      method: "POST",
      headers: { ...HEADERS, ...(session ? { "mcp-session-id": session } : {}) },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${String(body["method"])}: ${response.status} ${text}`);
    const json = response.headers.get("content-type")?.startsWith("text/event-stream")
      ? text
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice("data:".length))
          .find((data) => data.includes('"id"'))
      : text;
    return { session: response.headers.get("mcp-session-id"), answer: json ? (JSON.parse(json) as Answer) : undefined };
  }

  async function callGetUser(): Promise<Record<string, unknown>> {
    const init = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "e2e-uploaded-modules", version: "1" },
      },
    });
    const session = init.session!;
    await rpc({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
    const call = await rpc(
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_user", arguments: { login: "ada" } } },
      session,
    );
    return call.answer!.result!;
  }

  function admin(method: string, url: string, body?: string): Promise<Response> {
    return mf.dispatchFetch(`http://gateway.test/admin${url}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/yaml" },
      ...(body !== undefined ? { body } : {}),
    }) as unknown as Promise<Response>;
  }

  beforeAll(async () => {
    outdir = mkdtempSync(path.join(tmpdir(), "uploaded-modules-"));
    await promisify(execFile)(
      path.join(ROOT, "node_modules", ".bin", "wrangler"),
      ["deploy", "--dry-run", "--outdir", outdir],
      { cwd: ROOT },
    );
    alpha = await startAlpha();
    mf = gatewayFrom(outdir, {
      UPSTREAMS: JSON.stringify([{ name: "alpha", url: alpha.url }]),
      AUTH: '{"mode":"off"}',
      ADMIN_TOKEN,
      FILTER_CACHE_TTL_MS: "0",
    });
    await mf.ready;
  });

  afterAll(async () => {
    await mf?.dispose();
    await alpha?.close();
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  it("hold yaml beside the main module, which imports it by its uploaded name", () => {
    const { main, modules } = bundleModules(outdir);
    expect(modules.map((module) => module.name).sort()).toEqual([
      "approvals-module.mjs",
      CODE_MODE_MODULE,
      "guardrails-module.mjs",
      "index.js",
      JSON_SCHEMA_MODULE,
      "named-servers-module.mjs",
      OAUTH_MODULE,
      "search-module.mjs",
      "user-credentials-module.mjs",
      YAML_MODULE,
    ]);
    const code = readFileSync(main.path, "utf8");
    expect(code).not.toContain(YAML_MARKER);
    expect(code).toContain(`import("./${YAML_MODULE}")`);
    expect(readFileSync(path.join(outdir, YAML_MODULE), "utf8")).toContain(YAML_MARKER);
    expect(code).not.toContain(OAUTH_MARKER);
    expect(code).toContain(`import("./${OAUTH_MODULE}")`);
    expect(readFileSync(path.join(outdir, OAUTH_MODULE), "utf8")).toContain(OAUTH_MARKER);
    expect(code).not.toContain(JSON_SCHEMA_MARKER);
    expect(code).toContain(`import("./${JSON_SCHEMA_MODULE}")`);
    expect(readFileSync(path.join(outdir, JSON_SCHEMA_MODULE), "utf8")).toContain(JSON_SCHEMA_MARKER);
    expect(code).not.toContain(CODE_MODE_MARKER);
    expect(code).toContain(`import("./${CODE_MODE_MODULE}")`);
    expect(readFileSync(path.join(outdir, CODE_MODE_MODULE), "utf8")).toContain(CODE_MODE_MARKER);
    // Approvals' code (the gate, the approvers' API, the console page) is loaded by the main module's thin mounts.
    expect(code).toContain('import("./approvals-module.mjs")');
    expect(readFileSync(path.join(outdir, "approvals-module.mjs"), "utf8")).toContain("approvals/lazy-entry.ts");
  });

  it("load workers-oauth-provider by its uploaded name when AUTH.signIn is on", async () => {
    const signIn = { issuer: "https://idp.example", clientId: "SIGN_IN_CLIENT_ID", allowedDomains: ["example.com"] };
    const withSignIn = gatewayFrom(outdir, { UPSTREAMS: "[]", AUTH: JSON.stringify({ signIn }) });
    try {
      const response = await withSignIn.dispatchFetch("https://gateway.test/.well-known/oauth-authorization-server");
      expect(response.status).toBe(200);
      expect(((await response.json()) as { issuer: string }).issuer).toBe("https://gateway.test");
    } finally {
      await withSignIn.dispose();
    }
  });

  it("read a filter set written as YAML straight into KV, and apply it to a call", async () => {
    const kv = await mf.getKVNamespace("GATEWAY_KV");
    await kv.put("filter-sets/default", "tools:\n  alpha___get_user:\n    retain: [/userInfo/login]\n");
    expect((await callGetUser())["structuredContent"]).toEqual({ userInfo: { login: "ada" } });
    await kv.delete("filter-sets/default");
  });

  it("refuse text that is neither JSON nor YAML with the YAML parser's first line, and take YAML through the admin API", async () => {
    const refused = await admin("PUT", "/filter-sets/strict", "tools: [unclosed");
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { problems: unknown }).problems).toEqual([
      {
        path: "",
        message:
          "neither JSON nor YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 1, column 17:",
      },
    ]);
    const stored = await admin(
      "PUT",
      "/filter-sets/default",
      "tools:\n  alpha___get_user:\n    retain: [/userInfo/type]\n",
    );
    expect(stored.status).toBe(200);
    expect((await callGetUser())["structuredContent"]).toEqual({ userInfo: { type: "PhysicalPerson" } });
    expect((await admin("DELETE", "/filter-sets/default")).status).toBe(200);
  });
});

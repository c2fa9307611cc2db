/**
 * End to end: code mode (src/features/code-mode/) under `npm start` (wrangler dev, the
 * Worker Loader binding LOADER), with two SDK upstreams on loopback and authentication on.
 * A persona chooses `catalog: "code"` and hides some of alpha's tools. Real clients of
 * both protocol eras search, get TypeScript declarations, and run programs whose tool
 * calls go through the gateway as direct calls; the sandbox has no network, and a loop
 * that never ends is stopped while the gateway keeps serving another client.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha, startBeta } from "../fixtures/sdk-upstream.ts";
import { textOf } from "./tool-result.ts";

const ADMIN_TOKEN = "e2e-code-mode-admin-token-0123456789";
/** What the persona lets its callers use: alpha's whoami and big_list stay hidden. */
const ALLOWED = ["alpha___add", "alpha___get_user", "beta___echo"];

type Result = { content?: unknown; isError?: boolean };

describe("code mode with real clients", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let beta: Awaited<ReturnType<typeof startBeta>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let key: string;

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  async function legacy(path = "/mcp"): Promise<Client> {
    const client = new Client({ name: "e2e-code", version: "1.0.0" });
    const headers = { authorization: `Bearer ${key}` };
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`), { requestInit: { headers } }),
    );
    return client;
  }

  const run = (client: Client, code: string) =>
    client.callTool({ name: "sys___run_code", arguments: { code } }) as Promise<Result>;

  beforeAll(async () => {
    [alpha, beta] = await Promise.all([startAlpha(), startBeta()]);
    const upstreams = [
      { name: "alpha", url: alpha.url },
      { name: "beta", url: beta.url },
    ];
    const vars = { UPSTREAMS: upstreams, ADMIN_TOKEN, AUTH: { apiKeys: true } };
    gateway = await startGateway({ port: await freePort(), vars, persistTo: ".wrangler/e2e-code-mode" });
    const persona = { roles: ["coder"], allow: ALLOWED, catalog: "code" };
    expect((await admin("PUT", "/personas/coder", persona)).status).toBe(200);
    const made = await admin("POST", "/api-keys", { principal: "e2e-coder", roles: ["coder"] });
    expect(made.status).toBe(201);
    ({ key } = (await made.json()) as { key: string });
  });
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([alpha?.close(), beta?.close()]);
  });

  it("lists the gateway's tools and declares only the tools the persona allows", async () => {
    const client = await legacy();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["sys___read_payload", "sys___run_code", "sys___search_tools"]);
    const found = textOf(await client.callTool({ name: "sys___search_tools", arguments: { query: "", limit: 20 } }));
    expect(found).toContain("declare const tools: {");
    expect(found).toMatch(/add\(args: \{\n\s+a: number;\n\s+b: number;\n\s+\}\): Promise<\{\n\s+sum: number;/);
    expect(found).toContain("echo(args:");
    expect(found).toContain("Listed as beta___echo.");
    expect(found).not.toContain("whoami");
    expect(found).not.toContain("big_list");
    await client.close();
  });

  it("runs a program that calls two upstreams and answers only its filtered value", async () => {
    const client = await legacy();
    const code = [
      "const { sum } = await tools.alpha.add({ a: 2, b: 3 });",
      'const user = await tools.alpha.get_user({ login: "ada" });',
      'const echoed = await tools.beta.echo({ text: "hi" });',
      'console.log("followers", user.followers.length);',
      "return { sum, echoed, later: user.followers.filter((f) => f.id > 1).map((f) => f.login) };",
    ].join("\n");
    const result = await run(client, code);
    expect(result.isError).toBeFalsy();
    const [value, logs] = (result.content as { text: string }[]).map((part) => part.text);
    expect(JSON.parse(value!)).toEqual({ sum: 5, echoed: "beta: hi", later: ["f2"] });
    expect(logs).toBe("console output:\nfollowers 2");
    // Only the returned value reached the client: none of get_user's other fields.
    expect(textOf(result)).not.toContain("PhysicalPerson");
    await client.close();
  });

  it("keeps a hidden tool out of the program, as it is out of a direct call", async () => {
    const client = await legacy();
    const result = await run(client, "return [typeof tools.alpha.whoami, Object.keys(tools.alpha).sort()];");
    expect(JSON.parse(textOf(result))).toEqual(["undefined", ["add", "get_user"]]);
    await expect(client.callTool({ name: "alpha___whoami", arguments: {} })).rejects.toThrow(
      /Unknown tool: alpha___whoami/,
    );
    await client.close();
  });

  it("rejects a tool's error in the program with the message a direct call shows", async () => {
    const client = await legacy("/mcp?catalog=full");
    const direct = (await client.callTool({ name: "alpha___add", arguments: { a: "two", b: 3 } })) as Result;
    expect(direct.isError).toBe(true);
    await client.close();
    const coder = await legacy();
    const code = 'try { await tools.alpha.add({ a: "two", b: 3 }); } catch (error) { return error.message; }';
    const caught = JSON.parse(textOf(await run(coder, code))) as string;
    expect(caught).toBe(`alpha___add failed: ${textOf(direct)}`);
    const uncaught = await run(coder, '\nawait tools.alpha.add({ a: "two", b: 3 });');
    expect(uncaught.isError).toBe(true);
    expect(textOf(uncaught)).toBe(`Error: alpha___add failed: ${textOf(direct)} (line 2)`);
    await coder.close();
  });

  it.each([
    ["a syntax error", "const a = 1;\nconst b = ;", /^SyntaxError: Unexpected token \(line 2\)$/],
    ["a thrown error", '\n\nthrow new TypeError("no such issue");', /^TypeError: no such issue \(line 3\)$/],
    [
      "a syntax error only V8 finds",
      "with (Math) {}",
      /^SyntaxError: Strict mode code may not include a with statement \(line 1\)$/,
    ],
    ["a fetch (no network)", 'await fetch("http://127.0.0.1:1/")', /not permitted to access the internet.*\(line 1\)$/],
  ])("answers %s as a tool error with its line", async (_, code, expected) => {
    const client = await legacy();
    const result = await run(client, code);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(expected);
    await client.close();
  });

  it("stops a loop that never ends while the gateway serves another client", async () => {
    const [looping, other] = await Promise.all([legacy(), legacy("/mcp?catalog=full")]);
    const [stopped, sum] = await Promise.all([
      run(looping, "let n = 0;\nwhile (true) { n++; }"),
      other.callTool({ name: "alpha___add", arguments: { a: 20, b: 22 } }),
    ]);
    expect(stopped.isError).toBe(true);
    expect(textOf(stopped)).toMatch(/^RangeError: the program took more than [\d]+ steps .* \(line 2\)$/);
    expect(sum.structuredContent).toEqual({ sum: 42 });
    // The gateway still runs programs after it.
    expect(textOf(await run(looping, "return (await tools.alpha.add({ a: 1, b: 1 })).sum"))).toBe("2");
    await Promise.all([looping.close(), other.close()]);
  });

  it.each([
    ["/mcp?catalog=code", "alpha"],
    ["/mcp/alpha?catalog=code", "alpha"],
  ])("serves a 2026-07-28 client on %s", async (path, upstream) => {
    const client = new ModernClient(
      { name: "e2e-code-modern", version: "2.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const headers = { authorization: `Bearer ${key}` };
    await client.connect(new ModernTransport(new URL(`${gateway.url}${path}`), { requestInit: { headers } }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("sys___run_code");
    const code = `const { sum } = await tools.${upstream}.add({ a: 40, b: 2 });\nreturn sum;`;
    const result = await client.callTool({ name: "sys___run_code", arguments: { code } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("42");
    await client.close();
  });
});

/**
 * MCP Apps through every route: two SDK upstreams (test/fixtures/user-credentials-upstream.ts)
 * each declare the tool `show_board` whose `_meta.ui.resourceUri` is the same
 * `ui://board/app.html`, each serving its own HTML there. On /mcp each tool points at a URI
 * of its own (`ui://<upstream>___board/app.html`), listed and readable under exactly that
 * URI, and neither hides the other; on /mcp/<upstream> the URI is the upstream's own; on a
 * named server that picks one upstream's app tool and resource, the app is shown and read as
 * on /mcp and the other upstream's is not readable. For a 2025 session and a 2026-07-28
 * client alike, through the Worker.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { ADMIN_VARS, admin } from "../helpers/admin";
import { initialize, request, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const { origin } = inject("userCredentialsUpstream");
const label = crypto.randomUUID().slice(0, 8);
const UPSTREAMS = [
  { name: "appa", url: `${origin}/a${label}/mcp` },
  { name: "appb", url: `${origin}/b${label}/mcp` },
];
const VARS: Vars = { ...ADMIN_VARS, UPSTREAMS: JSON.stringify(UPSTREAMS) };
const SERVER = `apps-${label}`;

beforeAll(async () => {
  // The server picks appb's app tool (renamed) and the resource it points at, by the upstream's own URI.
  const document = {
    tools: [{ pick: "appb___show_board", alias: "board" }],
    resources: ["appb___ui://board/app.html"],
  };
  const saved = await admin("PUT", `/servers/${SERVER}`, document, { vars: VARS });
  expect(saved.status, await saved.clone().text()).toBe(201);
});

type Era = (path: string, method: string, params?: Record<string, unknown>) => Promise<Json>;

async function legacy(path: string): Promise<Era> {
  const { session } = await initialize(path, { vars: VARS });
  return (at, method, params) => request(at, session, method, params, { vars: VARS });
}

const modernEra: Era = (path, method, params = {}) => modern(path, method, params, { vars: VARS });

function appUriOf(list: Json, tool: string): string {
  const found = list.result?.tools?.find((t: Json) => t.name === tool);
  expect(found, JSON.stringify(list)).toBeDefined();
  return found._meta.ui.resourceUri;
}

async function read(era: Era, path: string, uri: string): Promise<{ uri: string; text: string }> {
  const answer = await era(path, "resources/read", { uri });
  expect(answer.result?.contents?.length, JSON.stringify(answer)).toBe(1);
  return answer.result.contents[0];
}

describe.each([
  ["a 2025 session", (path: string) => legacy(path)],
  ["a 2026-07-28 client", async () => modernEra],
])("an MCP App for %s", (_, eraFor) => {
  it("on /mcp: each upstream's app under a URI of its own, listed and readable as shown", async () => {
    const era = await eraFor("/mcp");
    const tools = await era("/mcp", "tools/list");
    const [a, b] = [appUriOf(tools, "appa___show_board"), appUriOf(tools, "appb___show_board")];
    expect([a, b]).toEqual(["ui://appa___board/app.html", "ui://appb___board/app.html"]);
    const listed = (await era("/mcp", "resources/list")).result.resources.map((r: Json) => r.uri);
    expect(listed).toEqual(expect.arrayContaining([a, b]));
    expect(await read(era, "/mcp", a)).toMatchObject({ uri: a, text: `<html><body>board of a${label}</body></html>` });
    expect(await read(era, "/mcp", b)).toMatchObject({ uri: b, text: `<html><body>board of b${label}</body></html>` });
  });

  it("on /mcp/<upstream>: the upstream's own URI, read from it", async () => {
    const era = await eraFor("/mcp/appb");
    const uri = appUriOf(await era("/mcp/appb", "tools/list"), "show_board");
    expect(uri).toBe("ui://board/app.html");
    expect((await read(era, "/mcp/appb", uri)).text).toContain(`board of b${label}`);
  });

  it("on a named server: the picked app shown and read as on /mcp, the other upstream's not readable", async () => {
    const path = `/mcp/servers/${SERVER}`;
    const era = await eraFor(path);
    const uri = appUriOf(await era(path, "tools/list"), "board");
    expect(uri).toBe("ui://appb___board/app.html");
    expect(await read(era, path, uri)).toMatchObject({ uri, text: `<html><body>board of b${label}</body></html>` });
    const other = await era(path, "resources/read", { uri: "ui://appa___board/app.html" });
    expect(other.result?.contents, JSON.stringify(other)).toBeUndefined();
    expect(other.error, JSON.stringify(other)).toBeDefined();
  });
});

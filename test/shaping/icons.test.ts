/**
 * Icons: the icons document puts icons on the matching tools, prompts, resources and
 * resource templates of each list, on /mcp and /mcp/<upstream>, after the upstream's own
 * (extend) or in their place (replace); icon files the gateway serves itself, from R2,
 * with their content type and caching headers.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { ADMIN_VARS, admin, putDocument } from "../helpers/admin";
import { gatewayFetch, initialize, request, type Json } from "../helpers/gateway";

const VARS = { ...ADMIN_VARS };
const UPSTREAM_ICON = { src: "https://alpha.example/info.png", mimeType: "image/png" };
const ICON = { src: "https://icons.example/a.svg", mimeType: "image/svg+xml", sizes: ["any"], theme: "dark" };
/** The smallest PNG: its signature and enough of a header for a test. */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

beforeEach(async () => {
  await admin("DELETE", "/icons");
});
// And after: the suite shares one KV, and the last test's document would shape every later file's lists.
afterAll(async () => {
  await admin("DELETE", "/icons");
});

function document(mode: "extend" | "replace"): unknown {
  return {
    mode,
    icons: [
      { match: "alpha___echo", kinds: ["tool"], icons: [ICON] },
      { match: "alpha___greet", kinds: ["prompt"], icons: [ICON] },
      { match: "alpha://info", icons: [ICON] },
      { match: "alpha://items/*", kinds: ["resourceTemplate"], icons: [ICON] },
    ],
  };
}

async function listed(path: string, method: string, key: string): Promise<Json[]> {
  const { session } = await initialize(path, { vars: VARS });
  return (await request(path, session, method, undefined, { vars: VARS })).result[key];
}

describe.each([
  ["/mcp", "alpha___"],
  ["/mcp/alpha", ""],
])("icons on %s", (path, prefix) => {
  it.each([
    ["a tool", "tools/list", "tools", (e: Json) => e.name === `${prefix}echo`, []],
    ["a prompt", "prompts/list", "prompts", (e: Json) => e.name === `${prefix}greet`, []],
    [
      "a resource, after the upstream's own icon",
      "resources/list",
      "resources",
      (e: Json) => e.uri === "alpha://info",
      [UPSTREAM_ICON],
    ],
    [
      "a resource template",
      "resources/templates/list",
      "resourceTemplates",
      (e: Json) => e.uriTemplate === "alpha://items/{id}",
      [],
    ],
  ])("are added to %s", async (_label, method, key, pick, own) => {
    const before = (await listed(path, method, key)).find(pick);
    expect(before.icons ?? []).toEqual(own);
    await putDocument("/icons", document("extend"));
    const after = await listed(path, method, key);
    expect(after.find(pick)).toEqual({ ...before, icons: [...own, ICON] });
    // An entry no glob matches keeps no icons of the gateway's.
    for (const entry of after.filter((e) => !pick(e))) expect(entry.icons ?? []).not.toContainEqual(ICON);
  });

  it("replace the upstream's own icons in replace mode", async () => {
    await putDocument("/icons", document("replace"));
    const info = (await listed(path, "resources/list", "resources")).find((e) => e.uri === "alpha://info");
    expect(info.icons).toEqual([ICON]);
  });

  it("name icon files the gateway serves by URLs on its own origin", async () => {
    await putDocument("/icons", {
      icons: [
        { match: "*___echo", kinds: ["tool"], icons: [{ file: "echo.png", mimeType: "image/png", sizes: ["48x48"] }] },
      ],
    });
    const echo = (await listed(path, "tools/list", "tools")).find((e) => e.name === `${prefix}echo`);
    expect(echo.icons).toEqual([
      { src: "http://gateway.test/icons/echo.png", mimeType: "image/png", sizes: ["48x48"] },
    ]);
  });
});

describe("icon files", () => {
  it("are stored in R2 and served with their type, a validator and caching headers", async () => {
    const put = await admin("PUT", "/icons/files/logo.png", PNG, { contentType: "image/png" });
    expect(put.status).toBe(200);
    const served = await gatewayFetch("/icons/logo.png");
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("cache-control")).toMatch(/^public, max-age=\d+/);
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(PNG);
    const etag = served.headers.get("etag")!;
    expect(etag).toBeTruthy();
    const again = await gatewayFetch("/icons/logo.png", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await (await admin("GET", "/icons/files")).json()).toEqual({ files: expect.arrayContaining(["logo.png"]) });
    expect((await admin("DELETE", "/icons/files/logo.png")).status).toBe(200);
    expect((await gatewayFetch("/icons/logo.png")).status).toBe(404);
  });

  it("serve SVG under a policy that runs no script", async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    expect((await admin("PUT", "/icons/files/a.svg", svg, { contentType: "image/svg+xml" })).status).toBe(200);
    const served = await gatewayFetch("/icons/a.svg");
    expect(served.headers.get("content-type")).toBe("image/svg+xml");
    expect(served.headers.get("content-security-policy")).toContain("default-src 'none'");
    await served.body?.cancel();
  });

  it.each([
    ["a type that is not an image", "text/html", "x.png", 415],
    ["a name with a path", "image/png", "..%2Fpayloads%2Fx", 400],
    ["an empty body", "image/png", "empty.png", 400],
  ])("are refused with %s", async (label, type, name, status) => {
    const body = label === "an empty body" ? new Uint8Array(0) : PNG;
    expect((await admin("PUT", `/icons/files/${name}`, body, { contentType: type })).status).toBe(status);
  });

  it("are refused past the size limit", async () => {
    expect(
      (await admin("PUT", "/icons/files/big.png", new Uint8Array(1024 * 1024 + 1), { contentType: "image/png" }))
        .status,
    ).toBe(413);
  });

  it("need the admin token to be stored", async () => {
    const response = await gatewayFetch(
      "/admin/icons/files/x.png",
      { method: "PUT", headers: { "content-type": "image/png" }, body: PNG },
      VARS,
    );
    expect(response.status).toBe(401);
  });
});

describe("the icons document", () => {
  it.each([
    [
      "an icon with neither src nor file",
      { icons: [{ match: "*", icons: [{ mimeType: "image/png" }] }] },
      "/icons/0/icons/0",
    ],
    ["an http: src", { icons: [{ match: "*", icons: [{ src: "http://x/a.png" }] }] }, "/icons/0/icons/0/src"],
    ["an unknown kind", { icons: [{ match: "*", kinds: ["tools"], icons: [ICON] }] }, "/icons/0/kinds"],
    ["a bad theme", { icons: [{ match: "*", icons: [{ ...ICON, theme: "blue" }] }] }, "/icons/0/icons/0/theme"],
    ["a bad mode", { mode: "merge", icons: [] }, "/mode"],
  ])("is refused with %s, located", async (_label, body, pointer) => {
    const response = await admin("PUT", "/icons", body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { problems: { path: string }[] }).problems.map((p) => p.path)).toContain(
      pointer,
    );
  });
});

/**
 * A list entry that writes one of its members twice, through the Worker. JSON.parse (and
 * so a client) reads the last `"name"`; a reader of the first would pin, prefix and route
 * another. Such an entry is served to no one, on either route and in any pinning mode:
 * the approved echo stays the only echo (`two-names`, test/fixtures/pins-upstream.ts),
 * the pins hold the dropped entry under the name a client would have read, with a
 * `duplicate-member` finding, and on `/mcp` an upstream cannot list another upstream's
 * tool name (`shadow`).
 */
import { expect, inject, test } from "vitest";
import { admin, ADMIN_VARS } from "../helpers/admin";
import type { Json } from "../helpers/gateway";
import { modern } from "../helpers/modern";
import { pinClient, pinVars, switchVariant } from "../helpers/pins";
import { LISTED_ECHO, SHADOWED_NAME } from "../fixtures/pins-upstream";

const APPROVED_ECHO: Json = JSON.parse(LISTED_ECHO);

function own(listed: readonly Json[]): Json[] {
  return listed.filter((entry) => !String(entry.name).startsWith("sys___"));
}

test.each(["enforce", "warn", "off"] as const)("an entry naming itself twice is not served (%s)", async (mode) => {
  const name = `p2n-${mode}`;
  const vars = pinVars({ name, ...(mode !== "off" ? { pinning: mode } : {}) });
  await switchVariant(name, "listed");
  const client = await pinClient(`/mcp/${name}`, vars);
  expect(own(await client.tools())).toEqual([APPROVED_ECHO]);
  await switchVariant(name, "two-names");
  expect(own(await client.tools())).toEqual([APPROVED_ECHO]);
  const listed = await modern(`/mcp/${name}`, "tools/list", {}, { vars });
  expect(own(listed.result.tools)).toEqual([APPROVED_ECHO]);
  if (mode === "off") return;
  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  expect(pins.definitions.map((d: Json) => d.name)).not.toContain("fresh_tool");
  const echo = pins.definitions.find((d: Json) => d.kind === "tool" && d.name === "echo");
  expect(echo.status).toBe("pending");
  const finding = { rule: "duplicate-member", severity: "high", at: "/name", match: '"name" twice' };
  expect(echo.pending.findings).toContainEqual(finding);
  const all = await (await admin("GET", "/pins", undefined, { vars })).json<Json>();
  expect(all.rules.map((r: Json) => r.rule)).toContain("duplicate-member");
});

test("on /mcp an upstream cannot list another upstream's tool under a second name", async () => {
  await switchVariant("pa-bank", "base");
  await switchVariant("pa-evil", "shadow");
  const base = inject("pinsUpstreamUrl");
  const upstreams = ["pa-bank", "pa-evil"].map((label) => ({ name: label, url: `${base}/${label}/mcp` }));
  const vars = { UPSTREAMS: JSON.stringify(upstreams), ADMIN_TOKEN: ADMIN_VARS["ADMIN_TOKEN"] };
  const tools = await (await pinClient("/mcp", vars)).tools();
  const echoes = tools.filter((t) => t.name === SHADOWED_NAME);
  expect(echoes).toHaveLength(1);
  expect(echoes[0].description).not.toContain("id_rsa");
  expect(tools.map((t) => t.name).filter((n) => String(n).startsWith("pa-evil___"))).toEqual([]);
});

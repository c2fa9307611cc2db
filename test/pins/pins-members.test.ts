/**
 * Members of a definition besides the ones every revision names, through the Worker:
 * an upstream whose echo carries `x-vendor` and `execution` (test/fixtures/pins-upstream.ts
 * `listed`) is relayed byte for byte while it is the approved version; when it gains an
 * `x-instructions` member and an `execution.note` (`extra-members`), that is a change like
 * any other: pending with its findings and diff, and under `enforce` clients keep the
 * approved bytes.
 */
import { env } from "cloudflare:workers";
import { expect, test } from "vitest";
import { canonicalDigest } from "../../src/core/canonical-json";
import { DECISIONS_KEY_PREFIX, PINS_KEY_PREFIX } from "../../src/features/pins/pin-store";
import { admin } from "../helpers/admin";
import { messageTexts, post, type Json } from "../helpers/gateway";
import { modern } from "../helpers/modern";
import { pinClient, pinVars, switchVariant, tool } from "../helpers/pins";
import { EXTRA_MEMBERS_ECHO, LISTED_ECHO } from "../fixtures/pins-upstream";

/** The raw text of a tools/list answer in `session` on `path`. */
async function listText(path: string, session: string, vars: Record<string, unknown>): Promise<string> {
  const response = await post(path, { jsonrpc: "2.0", id: 9, method: "tools/list" }, { session, vars });
  return (await messageTexts(response)).at(-1)!;
}

test.each(["warn", "enforce"] as const)("%s: a changed member outside the core ones is pending", async (mode) => {
  const name = `pm-extra-${mode}`;
  const path = `/mcp/${name}`;
  const vars = pinVars({ name, pinning: mode });
  await switchVariant(name, "listed");
  const client = await pinClient(path, vars);
  // The approved version reaches clients as the upstream wrote it, byte for byte, list after list.
  expect(await listText(path, client.session, vars)).toContain(LISTED_ECHO);
  expect(await listText(path, client.session, vars)).toContain(LISTED_ECHO);

  await switchVariant(name, "extra-members");
  const text = await listText(path, client.session, vars);
  if (mode === "enforce") {
    expect(text).toContain(LISTED_ECHO);
    expect(text).not.toContain("x-instructions");
    const modernList = await modern(path, "tools/list", {}, { vars });
    expect(tool(modernList.result.tools, "echo")).toEqual(JSON.parse(LISTED_ECHO));
  } else {
    expect(text).toContain(EXTRA_MEMBERS_ECHO);
  }

  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  const echo = pins.definitions.find((d: Json) => d.kind === "tool" && d.name === "echo");
  expect(echo.status).toBe("pending");
  const findings = echo.pending.findings.map((f: Json) => `${f.rule} ${f.at}`);
  expect(findings).toEqual(
    expect.arrayContaining(["instruction-tag /x-instructions", "sensitive-files /execution/note"]),
  );
  expect(echo.pending.diff.changes).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ path: "/x-instructions", change: "added" }),
      expect.objectContaining({ path: "/execution/note", change: "added" }),
    ]),
  );
});

test("pins stored before every member was pinned stay valid: an SDK tool keeps its digest and approval", async () => {
  const name = "pm-earlier";
  await switchVariant(name, "base");
  const listed: Json[] = await (await pinClient(`/mcp/${name}`, pinVars({ name, pinning: "off" }))).tools();
  const [add, echo] = [tool(listed, "add"), tool(listed, "echo")];
  expect(add.execution).toEqual({ taskSupport: "forbidden" }); // a member the digest used to leave out
  const at = "2026-11-01T00:00:00.000Z";
  const version = async (definition: Json) => {
    const { name: pinName, description, inputSchema } = definition;
    const digest = `sha256:${await canonicalDigest({ kind: "tool", name: pinName, description, inputSchema })}`;
    return { digest, definition: JSON.stringify(definition), findings: [], seenAt: at };
  };
  const oldEcho = { ...echo, description: "Old" };
  const [addV, echoV, oldEchoV] = await Promise.all([version(add), version(echo), version(oldEcho)]);
  const entries = {
    "tool:add": { kind: "tool", name: "add", first: addV, latest: addV },
    "tool:echo": { kind: "tool", name: "echo", first: oldEchoV, latest: echoV },
  };
  const pins = { v: 1, entries };
  await env.GATEWAY_KV.put(`${PINS_KEY_PREFIX}${name}`, JSON.stringify(pins));
  const decisions = { v: 1, entries: { "tool:echo": { approved: echoV } } };
  await env.GATEWAY_KV.put(`${DECISIONS_KEY_PREFIX}${name}`, JSON.stringify(decisions));

  const vars = pinVars({ name, pinning: "enforce" });
  const tools = await (await pinClient(`/mcp/${name}`, vars)).tools();
  expect([tool(tools, "add"), tool(tools, "echo")]).toEqual([add, echo]);
  const after = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  const byName = (pin: string) => after.definitions.find((d: Json) => d.kind === "tool" && d.name === pin);
  expect(byName("add")).toMatchObject({ status: "pinned", approved: { digest: addV.digest } });
  expect(byName("echo")).toMatchObject({ status: "pinned", approved: { digest: echoV.digest } });
  expect(after).toMatchObject({ pending: 0, held: 0 });
});

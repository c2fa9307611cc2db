/**
 * A tool or prompt an upstream lists twice, through the Worker: the upstream's approved
 * echo, then a list naming a poisoned echo first and the approved one after it (the same
 * for the prompt greet; test/fixtures/pins-upstream.ts `listed` and `duplicate`). Under
 * `enforce` no route, era or gateway tool serves the poisoned entry: clients get the
 * approved bytes once, and the pins show the poisoned version pending with a
 * `duplicate-name` finding. Under `warn` the list is served as the upstream sent it and
 * the duplicate is reported the same way.
 */
import { describe, expect, test } from "vitest";
import { admin } from "../helpers/admin";
import { messageTexts, post, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";
import { pinClient, pinVars, switchVariant } from "../helpers/pins";
import { LISTED_ECHO, LISTED_GREET } from "../fixtures/pins-upstream";

const APPROVED_ECHO: Json = JSON.parse(LISTED_ECHO);
const APPROVED_GREET: Json = JSON.parse(LISTED_GREET);

/** The upstream's own entries of a list (the gateway appends its sys___ tools). */
function own(listed: readonly Json[]): Json[] {
  return listed.filter((entry) => !String(entry.name).startsWith("sys___"));
}

/** An upstream of its own, pinned in `mode`, whose echo and greet were approved (first sight), now listed twice. */
async function duplicated(name: string, mode: "warn" | "enforce" = "enforce") {
  const vars = pinVars({ name, pinning: mode });
  await switchVariant(name, "listed");
  const client = await pinClient(`/mcp/${name}`, vars);
  expect(own(await client.tools())).toEqual([APPROVED_ECHO]);
  expect(await client.prompts()).toEqual([APPROVED_GREET]);
  await switchVariant(name, "duplicate");
  return { vars, client };
}

async function pinOf(name: string, vars: Vars, kind: "tool" | "prompt", pin: string): Promise<Json> {
  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  return pins.definitions.find((d: Json) => d.kind === kind && d.name === pin);
}

/** The poisoned version is what the pins hold as pending, with the duplicate as a high finding. */
function expectPendingDuplicate(pin: Json): void {
  expect(pin.status).toBe("pending");
  expect(pin.pending.digest).not.toBe(pin.approved.digest);
  expect(pin.pending.definition.description).toContain("~/.ssh/id_rsa");
  const rules = pin.pending.findings.map((f: Json) => f.rule);
  expect(rules).toEqual(expect.arrayContaining(["duplicate-name", "sensitive-files"]));
  const duplicate = pin.pending.findings.find((f: Json) => f.rule === "duplicate-name");
  expect(duplicate).toMatchObject({ severity: "high", match: "listed 2 times, 2 different definitions" });
}

describe("a name listed twice under enforce", () => {
  test("a 2025 session on /mcp/<upstream> gets the approved echo once; the poisoned one is pending", async () => {
    const name = "pd-session";
    const { vars, client } = await duplicated(name);
    expect(own(await client.tools())).toEqual([APPROVED_ECHO]);
    expectPendingDuplicate(await pinOf(name, vars, "tool", "echo"));
    // The list whose approved entry comes last is judged the same way the next time too.
    expect(own(await client.tools())).toEqual([APPROVED_ECHO]);
    expect((await pinOf(name, vars, "tool", "echo")).status).toBe("pending");
  });

  test("a 2026-07-28 client on /mcp/<upstream> gets the approved echo once", async () => {
    const name = "pd-modern";
    const { vars } = await duplicated(name);
    const listed = await modern(`/mcp/${name}`, "tools/list", {}, { vars });
    expect(own(listed.result.tools)).toEqual([APPROVED_ECHO]);
    expectPendingDuplicate(await pinOf(name, vars, "tool", "echo"));
  });

  test("sys___search_tools finds only the approved echo", async () => {
    const name = "pd-search";
    const { vars } = await duplicated(name);
    const path = `/mcp/${name}?catalog=search`;
    const search = await pinClient(path, vars);
    const { session } = search;
    const params = { name: "sys___search_tools", arguments: { query: "echoes its text", limit: 5 } };
    const body = { jsonrpc: "2.0", id: 3, method: "tools/call", params };
    const answer = JSON.parse((await messageTexts(await post(path, body, { session, vars }))).at(-1)!);
    const found = JSON.parse(answer.result.content[0].text);
    const approved = expect.objectContaining({ description: "Echoes its text", "x-vendor": { docs: "Echo docs" } });
    expect(found.tools.filter((t: Json) => t.name === "echo")).toEqual([approved]);
    expect(answer.result.content[0].text).not.toContain("id_rsa");
  });

  test("a prompt listed twice: the approved greet once, the poisoned one pending", async () => {
    const name = "pd-prompt";
    const { vars, client } = await duplicated(name);
    expect(await client.prompts()).toEqual([APPROVED_GREET]);
    expect((await modern(`/mcp/${name}`, "prompts/list", {}, { vars })).result.prompts).toEqual([APPROVED_GREET]);
    expectPendingDuplicate(await pinOf(name, vars, "prompt", "greet"));
  });
});

test("under warn the list is served as the upstream sent it, and the duplicate is reported", async () => {
  const name = "pd-warn";
  const { vars, client } = await duplicated(name, "warn");
  const tools = own(await client.tools());
  expect(tools).toHaveLength(2);
  expect(tools[1]).toEqual(APPROVED_ECHO);
  expectPendingDuplicate(await pinOf(name, vars, "tool", "echo"));
});

/**
 * Forgetting pins of tools an upstream named "", "." or ".." (test/fixtures/pins-upstream.ts
 * `odd-names`), through the Worker: the console's Forget and the admin API forget that one
 * definition and nothing else; a name never widens the action to the whole upstream, and
 * a name that reads as a path segment is no server error.
 */
import { beforeAll, expect, test } from "vitest";
import { admin } from "../helpers/admin";
import { consolePost, signIn, type ConsoleSignIn } from "../helpers/console";
import type { Json, Vars } from "../helpers/gateway";
import { pinClient, pinVars, switchVariant } from "../helpers/pins";

let session: ConsoleSignIn;
beforeAll(async () => {
  session = await signIn();
});

async function pinned(name: string, vars: Vars): Promise<string[]> {
  const pins = await (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  return pins.definitions.map((d: Json) => d.name).sort();
}

async function listedOddNames(name: string): Promise<Vars> {
  const vars = pinVars({ name, pinning: "enforce" });
  await switchVariant(name, "odd-names");
  await (await pinClient(`/mcp/${name}`, vars)).tools();
  expect(await pinned(name, vars)).toEqual(["", ".", "..", "echo"]);
  return vars;
}

test('the console\'s Forget of a tool named "", "." or ".." forgets that one definition', async () => {
  const name = "po-console";
  const vars = await listedOddNames(name);
  const left = ["", ".", "..", "echo"];
  for (const odd of [".", "..", ""]) {
    const response = await consolePost("/pins/forget", { upstream: name, kind: "tool", name: odd }, session, { vars });
    expect(response.status).toBe(303);
    left.splice(left.indexOf(odd), 1);
    expect(await pinned(name, vars)).toEqual(left);
  }
  // Forget all is its own action.
  expect((await consolePost("/pins/forget-all", { upstream: name }, session, { vars })).status).toBe(303);
  expect(await pinned(name, vars)).toEqual([]);
});

test.each(["", ".", ".."])("the admin API forgets a tool named %j by ?name=, and only it", async (odd) => {
  const name = `po-api-${["", ".", ".."].indexOf(odd)}`;
  const vars = await listedOddNames(name);
  const path = `/pins/${name}?kind=tool&name=${encodeURIComponent(odd)}`;
  const response = await admin("DELETE", path, undefined, { vars });
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ forgotten: { upstream: name, kind: "tool", name: odd } });
  expect(await pinned(name, vars)).toEqual(["", ".", "..", "echo"].filter((n) => n !== odd));
  const again = await admin("DELETE", path, undefined, { vars });
  expect(again.status).toBe(404);
  expect(await again.json()).toEqual({ error: `no tool ${JSON.stringify(odd)} is pinned for upstream "${name}"` });
});

test.each([".", ".."])("a name %j in the path (the URL drops it) answers 400 saying how to forget it", async (odd) => {
  const name = `po-path-${odd.length}`;
  const vars = await listedOddNames(name);
  const response = await admin("DELETE", `/pins/${name}/${odd}?kind=tool`, undefined, { vars });
  expect(response.status).toBe(400);
  const upstream = odd === "." ? name : "<upstream>"; // ".." took the upstream's segment too
  expect((await response.json<Json>()).error).toContain(`DELETE /admin/pins/${upstream}?kind=tool&name=<name>`);
  expect(await pinned(name, vars)).toEqual(["", ".", "..", "echo"]);
});

test("a console form without an upstream is a 400, not a server error", async () => {
  for (const path of ["/pins/forget", "/pins/forget-all"]) {
    const vars = pinVars({ name: "po-none" });
    const response = await consolePost(path, { kind: "tool", name: "echo" }, session, { vars });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("The form named no upstream");
  }
});

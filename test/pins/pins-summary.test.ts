/**
 * The counts of GET /admin/pins/<upstream> and of the pins in GET /admin/upstreams, through
 * the Worker: `pinned` counts every definition with an approved version, also one the
 * upstream has changed since (then it is also `pending`); `held` those with none.
 */
import { expect, test } from "vitest";
import { admin } from "../helpers/admin";
import type { Json } from "../helpers/gateway";
import { pinClient, pinVars, switchVariant } from "../helpers/pins";

test("an approved definition with a pending change counts as pinned (approveNew: add approved, echo not)", async () => {
  const name = "ps-counts";
  const vars = pinVars({ name, pinning: "enforce", approveNew: true });
  await switchVariant(name, "base");
  const client = await pinClient(`/mcp/${name}`, vars);
  await client.tools();
  const pinsOf = async () => (await admin("GET", `/pins/${name}`, undefined, { vars })).json<Json>();
  const add = (await pinsOf()).definitions.find((d: Json) => d.name === "add");
  expect((await admin("POST", `/pins/${name}/add/approve`, { digest: add.pending.digest }, { vars })).status).toBe(200);
  expect(await pinsOf()).toMatchObject({ pinned: 1, pending: 0, held: 1 });

  await switchVariant(name, "schema"); // add changes: its approved version stays what clients get
  await client.tools();
  const pins = await pinsOf();
  const changed = pins.definitions.find((d: Json) => d.name === "add");
  expect(changed).toMatchObject({ status: "pending", approved: { digest: add.pending.digest } });
  expect(pins).toMatchObject({ pinned: 1, pending: 1, rejected: 0, held: 1 });
  const upstreams = await (await admin("GET", "/upstreams", undefined, { vars })).json<Json>();
  expect(upstreams.upstreams.find((u: Json) => u.name === name).pins).toMatchObject({ pinned: 1, pending: 1, held: 1 });
});

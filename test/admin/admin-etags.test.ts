/**
 * Opt-in concurrency control of the admin API's KV documents: GET answers an ETag, a
 * write with a stale If-Match is refused with 412 and stores nothing, `If-Match: *` asks
 * that the document (or persona) exists, `If-None-Match: *` that it does not, and a write without If-Match stays
 * unconditional. Two admins writing personas at once on one isolate lose nothing.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { admin } from "../helpers/admin";

type Case = readonly [label: string, path: string, first: unknown, second: unknown];

const DOCUMENTS: readonly Case[] = [
  [
    "a filter set",
    "/filter-sets/etag-test",
    { tools: { alpha___echo: { retain: ["/a"] } } },
    { tools: { alpha___echo: { retain: ["/b"] } } },
  ],
  ["the plan", "/plan", { default: "etag-test" }, { default: "etag-other" }],
  ["visibility", "/visibility", { deny: ["etag___one"] }, { deny: ["etag___two"] }],
  ["icons", "/icons", { mode: "extend", icons: [] }, { mode: "replace", icons: [] }],
  [
    "overrides",
    "/overrides",
    { tools: { etag___x: { description: "one" } } },
    { tools: { etag___x: { description: "two" } } },
  ],
  ["rules", "/rules", { hints: { etag___a: "one" } }, { hints: { etag___a: "two" } }],
  [
    "a persona",
    "/personas/etag-a",
    { roles: ["r-etag-a"], allow: ["alpha___*"] },
    { roles: ["r-etag-a"], allow: ["beta___*"] },
  ],
];

afterAll(async () => {
  for (const [, path] of DOCUMENTS) await admin("DELETE", path);
  for (const name of ["etag-b", "etag-c", "etag-d"]) await admin("DELETE", `/personas/${name}`);
});

async function stored(path: string): Promise<unknown> {
  return (await admin("GET", path)).json();
}

describe.each(DOCUMENTS)("%s", (_label, path, first, second) => {
  it("GET answers the ETag a write answered; a stale If-Match is refused with 412 and stores nothing", async () => {
    await admin("DELETE", path);
    const put = await admin("PUT", path, first);
    expect(put.status).toBe(200);
    const etag = put.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const read = await admin("GET", path);
    expect(read.headers.get("etag")).toBe(etag);

    const next = await admin("PUT", path, second, { headers: { "if-match": etag! } });
    expect(next.status).toBe(200);
    const newer = next.headers.get("etag");
    expect(newer).not.toBe(etag);

    // The other admin still holds the first ETag: refused, and the document is the second one.
    const stale = await admin("PUT", path, first, { headers: { "if-match": etag! } });
    expect(stale.status).toBe(412);
    expect(stale.headers.get("etag")).toBe(newer);
    expect(((await stale.json()) as { error: string }).error).toMatch(
      /Precondition Failed: it changed since you read it; nothing was stored/,
    );
    expect((await admin("GET", path)).headers.get("etag")).toBe(newer);
    expect(await stored(path)).toMatchObject(second as object);

    expect((await admin("DELETE", path, undefined, { headers: { "if-match": etag! } })).status).toBe(412);
    expect((await admin("DELETE", path, undefined, { headers: { "if-match": `W/${newer!}, ${newer!}` } })).status).toBe(
      200,
    );
    expect((await admin("GET", path)).status).toBe(404);
  });

  it("If-Match: * writes only over what exists; without If-Match a write stays unconditional", async () => {
    await admin("DELETE", path);
    expect((await admin("PUT", path, first, { headers: { "if-match": "*" } })).status).toBe(412);
    expect((await admin("GET", path)).status).toBe(404);
    expect((await admin("PUT", path, first)).status).toBe(200);
    expect((await admin("PUT", path, second, { headers: { "if-match": "*" } })).status).toBe(200);
    expect(await stored(path)).toMatchObject(second as object);
    expect((await admin("PUT", path, first)).status).toBe(200);
    expect(await stored(path)).toMatchObject(first as object);
  });

  it("If-None-Match: * writes only where nothing exists: 412 with the current ETag when it does, and nothing stored", async () => {
    await admin("DELETE", path);
    const created = await admin("PUT", path, first, { headers: { "if-none-match": "*" } });
    expect(created.status).toBe(200);
    const etag = created.headers.get("etag")!;
    // Another admin who also saw it absent: refused, the first creation kept.
    const late = await admin("PUT", path, second, { headers: { "if-none-match": "*" } });
    expect(late.status).toBe(412);
    expect(late.headers.get("etag")).toBe(etag);
    expect(((await late.json()) as { error: string }).error).toMatch(
      /^Precondition Failed: If-None-Match: \* needs it to be absent, and it exists/,
    );
    expect(await stored(path)).toMatchObject(first as object);
    expect((await admin("DELETE", path, undefined, { headers: { "if-none-match": "*" } })).status).toBe(412);
    // Listed tags: refused while one is the current version (weak comparison), else written.
    expect((await admin("PUT", path, second, { headers: { "if-none-match": `W/${etag}` } })).status).toBe(412);
    expect((await admin("PUT", path, second, { headers: { "if-none-match": `"${"0".repeat(32)}"` } })).status).toBe(
      200,
    );
    expect(await stored(path)).toMatchObject(second as object);
  });
});

describe("personas, one document", () => {
  it("the collection answers the document's ETag, which a write to any persona changes", async () => {
    const before = await admin("GET", "/personas");
    const etag = before.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(
      (
        await admin(
          "PUT",
          "/personas/etag-b",
          { roles: ["r-etag-b"], allow: ["alpha___*"] },
          { headers: { "if-match": etag! } },
        )
      ).status,
    ).toBe(200);
    // Another admin, who read the collection before that write, is refused.
    expect(
      (
        await admin(
          "PUT",
          "/personas/etag-c",
          { roles: ["r-etag-c"], allow: ["alpha___*"] },
          { headers: { "if-match": etag! } },
        )
      ).status,
    ).toBe(412);
    expect((await admin("GET", "/personas/etag-c")).status).toBe(404);
  });

  it("two admins writing at once with the same If-Match: one is stored, the other answered 412", async () => {
    const etag = (await admin("GET", "/personas")).headers.get("etag")!;
    const [b, c] = await Promise.all([
      admin("PUT", "/personas/etag-b", { roles: ["r-etag-b"], allow: ["beta___*"] }, { headers: { "if-match": etag } }),
      admin("PUT", "/personas/etag-c", { roles: ["r-etag-c"], allow: ["beta___*"] }, { headers: { "if-match": etag } }),
    ]);
    expect([b.status, c.status].sort()).toEqual([200, 412]);
  });

  it("two unconditional writes at once on one isolate both survive", async () => {
    const [b, d] = await Promise.all([
      admin("PUT", "/personas/etag-b", { roles: ["r-etag-b"], allow: ["alpha___echo"] }),
      admin("PUT", "/personas/etag-d", { roles: ["r-etag-d"], allow: ["alpha___echo"] }),
    ]);
    expect([b.status, d.status]).toEqual([200, 200]);
    const { personas } = (await stored("/personas")) as { personas: Record<string, { allow: string[] }> };
    expect(personas["etag-b"]?.allow).toEqual(["alpha___echo"]);
    expect(personas["etag-d"]?.allow).toEqual(["alpha___echo"]);
  });

  it("written as YAML straight into KV: If-Match: * finds its personas, and a write keeps them (as JSON)", async () => {
    const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;
    const before = await kv.get("personas");
    try {
      await kv.put("personas", "etag-yaml:\n  roles: [r-etag-yaml]\n  allow: ['alpha___*']\n");
      expect(
        (
          await admin(
            "PUT",
            "/personas/etag-absent",
            { roles: ["r-etag-absent"], allow: ["alpha___*"] },
            { headers: { "if-match": "*" } },
          )
        ).status,
      ).toBe(412);
      expect(
        (
          await admin(
            "PUT",
            "/personas/etag-yaml",
            { roles: ["r-etag-yaml"], allow: ["beta___*"] },
            { headers: { "if-match": "*" } },
          )
        ).status,
      ).toBe(200);
      expect(JSON.parse((await kv.get("personas"))!)).toMatchObject({
        "etag-yaml": { roles: ["r-etag-yaml"], allow: ["beta___*"] },
      });
    } finally {
      if (before === null) await kv.delete("personas");
      else await kv.put("personas", before);
    }
  });
});

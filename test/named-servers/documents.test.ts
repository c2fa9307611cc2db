/**
 * The admin API of named servers: documents checked on write with each problem located by
 * a JSON Pointer (nothing stored), YAML accepted, ETags with If-Match / If-None-Match, the
 * list with each server's URL and counts, and every write audited.
 */
import { describe, expect, it } from "vitest";
import { admin } from "../helpers/admin";
import { eventWhere } from "./audit-events";
import type { Json } from "../helpers/gateway";

const tag = () => crypto.randomUUID().slice(0, 8);

describe("named server documents", () => {
  it.each([
    [{ tools: "alpha___echo" }, "/tools", "must be a list"],
    [{ tools: ["echo"] }, "/tools/0", 'must be "<upstream>___<tool>"'],
    [{ tools: [{ pick: "alpha___*", alias: "all" }] }, "/tools/0/alias", "a glob picks many"],
    [{ tools: [{ pick: "alpha___echo", alias: "a___b" }] }, "/tools/0/alias", "without '___'"],
    [
      {
        tools: [
          { pick: "alpha___echo", alias: "x" },
          { pick: "alpha___add", alias: "x" },
        ],
      },
      "/tools/1/alias",
      "names two",
    ],
    [{ tools: ["alpha___echo", "alpha___echo"] }, "/tools/1", "picked twice"],
    [{ tools: [{ pick: "alpha___echo", nickname: "e" }] }, "/tools/0/nickname", "unknown field"],
    [{ resources: [{ pick: "alpha___alpha://info", alias: "info" }] }, "/resources/0/alias", "unknown field"],
    [{ tools: ["alpha___echo"], catalog: "tiny" }, "/catalog", "must be one of full, compact, search, code"],
    [{ tools: ["alpha___echo"], roles: [] }, "/roles", "role names"],
    [{ tools: ["alpha___echo"], title: "" }, "/title", "non-empty string"],
    [{ tools: ["alpha___echo"], colour: "red" }, "/colour", "unknown field"],
    [{}, "/tools", "at least one"],
    [[], "", "must be an object"],
  ])("refuses %j at %s", async (document, path, message) => {
    const name = `bad-${tag()}`;
    const response = await admin("PUT", `/servers/${name}`, document);
    expect(response.status).toBe(400);
    const body = await response.json<Json>();
    expect(body.error).toBe(`invalid server "${name}"; nothing was stored`);
    expect(body.problems).toContainEqual({ path, message: expect.stringContaining(message) });
    expect((await admin("GET", `/servers/${name}`)).status).toBe(404);
  });

  it("refuses a name that is no URL segment, and a body that does not parse", async () => {
    const badName = await admin("PUT", "/servers/-dash", { tools: ["alpha___echo"] });
    expect(badName.status).toBe(400);
    expect((await badName.json<Json>()).problems[0].message).toContain("the server's name");
    const unparsed = await admin("PUT", `/servers/p-${tag()}`, "{ not json", { contentType: "application/json" });
    expect(unparsed.status).toBe(400);
  });

  it("stores YAML, answers ETags, honours If-Match, lists and audits", async () => {
    const name = `doc-${tag()}`;
    const yaml = "title: Docs\ntools:\n  - pick: alpha___echo\n    alias: say\nroles: [docs]\n";
    const created = await admin("PUT", `/servers/${name}`, yaml, { contentType: "application/yaml" });
    expect(created.status).toBe(201);
    expect(await created.json<Json>()).toMatchObject({
      name,
      created: true,
      url: `http://gateway.test/mcp/servers/${name}`,
    });
    const read = await admin("GET", `/servers/${name}`);
    const etag = read.headers.get("etag")!;
    expect(etag).toBeTruthy();
    expect(await read.json<Json>()).toEqual({
      title: "Docs",
      tools: [{ pick: "alpha___echo", alias: "say" }],
      roles: ["docs"],
    });

    const stale = await admin(
      "PUT",
      `/servers/${name}`,
      { tools: ["beta___echo"] },
      { headers: { "if-match": '"stale"' } },
    );
    expect(stale.status).toBe(412);
    const fresh = await admin("PUT", `/servers/${name}`, { tools: ["beta___echo"] }, { headers: { "if-match": etag } });
    expect(fresh.status).toBe(200);
    const again = await admin(
      "PUT",
      `/servers/${name}`,
      { tools: ["beta___echo"] },
      { headers: { "if-none-match": "*" } },
    );
    expect(again.status).toBe(412);

    const listed = await (await admin("GET", "/servers")).json<Json>();
    expect(listed.servers).toContainEqual({
      name,
      url: `http://gateway.test/mcp/servers/${name}`,
      tools: 1,
      prompts: 0,
      resources: 0,
    });
    expect((await admin("DELETE", `/servers/${name}`)).status).toBe(200);
    expect((await admin("DELETE", `/servers/${name}`)).status).toBe(404);

    for (const edit of ["create", "change", "remove"]) {
      const route = `/admin/servers/${name}`;
      const event = await eventWhere(
        "user=admin",
        (e) => e["gateway.route"] === route && e["mcp.method.name"] === `(server-${edit})`,
      );
      expect(event, edit).toBeDefined();
    }
  });
});

/**
 * An upstream the caller's persona does not reach is, to that caller, an upstream that
 * does not exist: `/mcp/<upstream>` answers the unknown route's 404 for every verb and
 * both eras, and the upstream hears nothing (no handshake, no request). On `/mcp`, the
 * client's notifications and `logging/setLevel` go only to the upstreams the persona
 * reaches, even in a session opened while it reached more. Counted at the upstream
 * (test/fixtures/names-upstream.ts, mode `logs`: it declares logging).
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { admin, authVars, expectNoSuchUpstream, makeKey } from "../helpers/auth";
import { gatewayFetch, initialize, LATEST, post, request } from "../helpers/gateway";
import { modernPost } from "../helpers/modern";

const names = inject("namesUpstream");
const RUN = crypto.randomUUID().slice(0, 8);
const KEYS = { near: `unear${RUN}`, far: `ufar${RUN}` };
const VARS = authVars(
  { apiKeys: true },
  {
    UPSTREAMS: JSON.stringify([
      { name: "far", url: `${names}/logs/${KEYS.far}/mcp` },
      { name: "near", url: `${names}/logs/${KEYS.near}/mcp` },
    ]),
  },
);
const ONLY_NEAR = { roles: ["u-near"], allow: ["near___*"] };
const BOTH = { roles: ["u-both"], allow: ["near___*", "far___*"] };

type Counts = { total: number; byMethod: Record<string, number> };

async function counts(key: string): Promise<Counts> {
  return (await (await fetch(`${names}/counts/${key}`)).json()) as Counts;
}

async function headersFor(roles: string[]): Promise<Record<string, string>> {
  return (await makeKey({ principal: `unreach-${roles.join("-") || "none"}-${crypto.randomUUID()}`, roles }, VARS))
    .headers;
}

beforeAll(async () => {
  expect((await admin("PUT", "/personas/u-only-near", ONLY_NEAR, VARS)).status).toBe(200);
  expect((await admin("PUT", "/personas/u-both", BOTH, VARS)).status).toBe(200);
});

const SSE = { accept: "text/event-stream" };
const JSON_BOTH = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const initializeBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/** Every way in: each verb of the 2025 front (with and without a session id) and 2026-07-28 requests. */
const REQUESTS: readonly [string, (path: string, headers: Record<string, string>) => Promise<Response>][] = [
  [
    "2025 POST initialize",
    (path, headers) =>
      gatewayFetch(path, { method: "POST", headers: { ...headers, ...JSON_BOTH }, body: initializeBody }, VARS),
  ],
  [
    "2025 POST tools/call",
    (path, headers) =>
      post(
        path,
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: {} } },
        { vars: VARS, headers, session: "made-up" },
      ),
  ],
  [
    "2025 POST a notification",
    (path, headers) =>
      post(
        path,
        { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
        { vars: VARS, headers, session: "made-up" },
      ),
  ],
  [
    "2025 POST a batch",
    (path, headers) => post(path, [{ jsonrpc: "2.0", id: 3, method: "ping" }], { vars: VARS, headers }),
  ],
  [
    "2025 GET",
    (path, headers) =>
      gatewayFetch(
        path,
        { method: "GET", headers: { ...headers, ...SSE, "mcp-session-id": "made-up", "mcp-protocol-version": LATEST } },
        VARS,
      ),
  ],
  [
    "2025 DELETE",
    (path, headers) =>
      gatewayFetch(
        path,
        { method: "DELETE", headers: { ...headers, "mcp-session-id": "made-up", "mcp-protocol-version": LATEST } },
        VARS,
      ),
  ],
  ["2026 server/discover", (path, headers) => modernPost(path, "server/discover", {}, { vars: VARS, headers })],
  ["2026 tools/list", (path, headers) => modernPost(path, "tools/list", {}, { vars: VARS, headers })],
  [
    "2026 tools/call",
    (path, headers) =>
      modernPost(path, "tools/call", { name: "echo", arguments: { text: "x" } }, { vars: VARS, headers }),
  ],
  [
    "2026 resources/read",
    (path, headers) => modernPost(path, "resources/read", { uri: `${KEYS.far}://own` }, { vars: VARS, headers }),
  ],
  [
    "2026 subscriptions/listen",
    (path, headers) =>
      modernPost(path, "subscriptions/listen", { notifications: { toolsListChanged: true } }, { vars: VARS, headers }),
  ],
];

describe("/mcp/<upstream> the persona does not reach", () => {
  it.each([
    ["a persona reaching another upstream", ["u-near"]],
    ["no persona (default deny)", [] as string[]],
  ])(
    "answers as an unknown upstream, for every verb and both eras, and the upstream hears nothing (%s)",
    async (_label, roles) => {
      const headers = await headersFor(roles);
      const before = (await counts(KEYS.far)).total;
      for (const [label, send] of REQUESTS) await expectNoSuchUpstream((path) => send(path, headers), "far", label);
      expect((await counts(KEYS.far)).total).toBe(before);
    },
  );

  it("still serves a caller whose persona reaches it", async () => {
    const headers = await headersFor(["u-both"]);
    const { result } = await initialize("/mcp/far", { vars: VARS, headers });
    expect(result.serverInfo.name).toBe(`names-${KEYS.far}`);
    const answer = await (
      await modernPost("/mcp/far", "tools/call", { name: "echo", arguments: { text: "hi" } }, { vars: VARS, headers })
    ).json();
    expect((answer as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe(`${KEYS.far}: hi`);
  });

  it("closes a session opened while the persona reached it, once it no longer does", async () => {
    const persona = `u-shrink-route-${RUN}`;
    const roles = [`r-${persona}`];
    expect((await admin("PUT", `/personas/${persona}`, { roles, allow: ["far___*", "near___*"] }, VARS)).status).toBe(
      200,
    );
    const headers = await headersFor(roles);
    const { session } = await initialize("/mcp/far", { vars: VARS, headers });
    expect(
      (
        await request(
          "/mcp/far",
          session,
          "tools/call",
          { name: "echo", arguments: { text: "a" } },
          { vars: VARS, headers },
        )
      ).result.content[0].text,
    ).toBe(`${KEYS.far}: a`);
    expect((await admin("PUT", `/personas/${persona}`, { roles, allow: ["near___*"] }, VARS)).status).toBe(200);
    const before = (await counts(KEYS.far)).total;
    await expectNoSuchUpstream(
      (path) =>
        post(
          path,
          { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "echo", arguments: { text: "b" } } },
          { vars: VARS, headers, session },
        ),
      "far",
    );
    expect((await counts(KEYS.far)).total).toBe(before);
  });
});

describe("on /mcp, the client's notifications and logging/setLevel", () => {
  it("reach only the upstreams the persona reaches now, in a session opened when it reached more", async () => {
    const persona = `u-shrink-${RUN}`;
    const roles = [`r-${persona}`];
    expect((await admin("PUT", `/personas/${persona}`, { roles, allow: ["far___*", "near___*"] }, VARS)).status).toBe(
      200,
    );
    const headers = await headersFor(roles);
    const { session } = await initialize("/mcp", { vars: VARS, headers });
    // The persona now reaches only near; the session still holds far's upstream session.
    expect((await admin("PUT", `/personas/${persona}`, { roles, allow: ["near___*"] }, VARS)).status).toBe(200);
    const [far, near] = [await counts(KEYS.far), await counts(KEYS.near)];

    const level = await request("/mcp", session, "logging/setLevel", { level: "debug" }, { vars: VARS, headers });
    expect(level.result).toEqual({});
    for (const method of ["notifications/cancelled", "notifications/roots/list_changed"]) {
      const params = method === "notifications/cancelled" ? { requestId: 77, reason: "test" } : {};
      const sent = await post(
        "/mcp",
        { jsonrpc: "2.0", method, params },
        { vars: VARS, headers, session, settle: true },
      );
      expect(sent.status, method).toBe(202);
    }

    const [farAfter, nearAfter] = [await counts(KEYS.far), await counts(KEYS.near)];
    expect(farAfter.total - far.total).toBe(0);
    // The upstream it reaches got each one.
    for (const method of ["logging/setLevel", "notifications/cancelled", "notifications/roots/list_changed"]) {
      expect((nearAfter.byMethod[method] ?? 0) - (near.byMethod[method] ?? 0), method).toBe(1);
    }
  });
});

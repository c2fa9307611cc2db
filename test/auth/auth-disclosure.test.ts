/**
 * With authentication on, what the gateway says about its upstreams: nothing to an
 * unauthenticated caller (GET / says authentication is required; /mcp/<name> answers the
 * same 401 whether the upstream exists or not), and to an authenticated one only the
 * upstreams its persona reaches. With AUTH off GET / lists every upstream (test/front/protocol.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, authVars, makeKey } from "../helpers/auth";
import { gatewayFetch, post, type Json } from "../helpers/gateway";

const VARS = authVars({ apiKeys: true });
const PING = { jsonrpc: "2.0", id: 1, method: "ping" };
const NAMES = /alpha|beta|"raw"/;

beforeAll(async () => {
  expect(
    (await admin("PUT", "/personas/disclosure", { roles: ["r-disclosure"], allow: ["alpha___*"] }, VARS)).status,
  ).toBe(200);
});
afterAll(async () => {
  await admin("DELETE", "/personas/disclosure", undefined, VARS);
});

async function home(headers: Record<string, string> = {}): Promise<Json> {
  const response = await gatewayFetch("/", { headers }, VARS);
  expect(response.status).toBe(200);
  return response.json();
}

describe("GET / with authentication on", () => {
  it.each([
    ["no credentials", {}],
    [
      "a bad API key",
      { authorization: "Bearer mgw_00000000000000000000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
    ],
    ["a token that is not one", { authorization: "Bearer nonsense" }],
  ])("names no upstream to a caller with %s, and says how to authenticate", async (_label, headers) => {
    const body = await home(headers);
    expect(body).toMatchObject({
      name: "mcp-edge-gateway",
      endpoints: { aggregated: "/mcp" },
      authentication: expect.stringContaining("required"),
      resourceMetadata: "http://gateway.test/.well-known/oauth-protected-resource/mcp",
    });
    expect(body.upstreams).toBeUndefined();
    expect(JSON.stringify(body)).not.toMatch(NAMES);
  });

  it("names only the upstreams an authenticated caller's persona reaches", async () => {
    const reaching = await makeKey({ principal: `disclosure-${crypto.randomUUID()}`, roles: ["r-disclosure"] }, VARS);
    expect((await home(reaching.headers)).upstreams).toEqual(["alpha"]);
    const nobody = await makeKey({ principal: `nobody-${crypto.randomUUID()}`, roles: ["r-none"] }, VARS);
    expect((await home(nobody.headers)).upstreams).toEqual([]);
  });
});

describe("/mcp/<name> with authentication on", () => {
  it("answers an unauthenticated caller the same 401 for an upstream that exists and one that does not", async () => {
    const [existing, unknown] = await Promise.all([
      post("/mcp/beta", PING, { vars: VARS }),
      post("/mcp/nope", PING, { vars: VARS }),
    ]);
    expect([existing.status, unknown.status]).toEqual([401, 401]);
    const [a, b] = [
      (await existing.text()).replaceAll("beta", "<name>"),
      (await unknown.text()).replaceAll("nope", "<name>"),
    ];
    expect(a).toBe(b);
    expect(existing.headers.get("www-authenticate")!.replaceAll("beta", "<name>")).toBe(
      unknown.headers.get("www-authenticate")!.replaceAll("nope", "<name>"),
    );
    expect(b).not.toMatch(NAMES);
  });

  it("tells an authenticated caller of an unknown upstream only the ones it may reach", async () => {
    const { headers } = await makeKey(
      { principal: `disclosure-${crypto.randomUUID()}`, roles: ["r-disclosure"] },
      VARS,
    );
    const response = await post("/mcp/nope", PING, { vars: VARS, headers });
    expect(response.status).toBe(404);
    const message = ((await response.json()) as Json).error.message as string;
    expect(message).toBe('Not Found: no upstream named "nope"; you may reach: alpha');
  });
});

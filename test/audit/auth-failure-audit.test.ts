/**
 * Failed authentications in the audit trail, through the real Queue, consumer and R2,
 * read back with GET /admin/audit: each says why, where and from which source (never
 * the credential); a flood from one source is cut to a bounded number of events plus a
 * summary of what was left out; an identity-provider outage (503) is recorded too.
 * Each test calls from sources of its own (CF-Connecting-IP), so its events are told
 * apart from every other test's.
 */
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { admin, authVars, makeKey } from "../helpers/auth";
import { gatewayFetch, post, type Json, type Vars } from "../helpers/gateway";
import { CONSOLE_ORIGIN, formInit } from "../helpers/console";
import { bearer, claims, INIT, jwtAuth, sign, strangerToken } from "../helpers/jwt";

const jwks = inject("jwks");
const VARS = authVars({ apiKeys: true, ...jwtAuth(jwks.url) });
/** README: at most this many events per source and minute, then a summary. */
const PER_SOURCE = 10;
/** README: at most this many events per isolate and minute, all sources together. */
const PER_ISOLATE = 100;
/** docs/admin-api.md: wrong admin tokens judged per source, minute and isolate before the source is throttled. */
const ADMIN_FAILURES_PER_SOURCE = 5;
const SIGN_IN = "/admin/console/sign-in";
const CONSUMER_DEADLINE_MS = 15_000;
const POLL_MS = 100;

const newSource = () => `2001:db8:${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}::1`;

/**
 * The failed-authentication events of `source` once at least `count` are in R2 (the
 * consumer runs on its own schedule). Polls are counted, not timed: a test may stop the clock.
 */
async function eventsOf(source: string | ((address: string) => boolean), count: number): Promise<Json[]> {
  const matches = typeof source === "string" ? (address: string) => address === source : source;
  for (let poll = 0; ; poll++) {
    const response = await admin(
      "GET",
      `/audit?user=${encodeURIComponent("(unauthenticated)")}&limit=1000`,
      undefined,
      VARS,
    );
    expect(response.status).toBe(200);
    const events = (await response.text())
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Json);
    const mine = events.filter((event) => matches(event["client.address"]));
    if (mine.length >= count || poll * POLL_MS > CONSUMER_DEADLINE_MS) return mine;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function attempt(path: string, source: string, headers: Record<string, string>, vars: Vars = VARS): Promise<Response> {
  return post(path, INIT, { vars, headers: { "cf-connecting-ip": source, "user-agent": "probe/1.0", ...headers } });
}

/** A console sign-in with `token` from `source`. */
function signInAttempt(token: string, source: string): Promise<Response> {
  const init = formInit({ token }, undefined);
  return gatewayFetch(
    `${CONSOLE_ORIGIN}/admin/console/sign-in`,
    { ...init, headers: { ...(init.headers as Record<string, string>), "cf-connecting-ip": source } },
    VARS,
  );
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("a failed authentication", () => {
  const unknownKey = `mgw_${"0".repeat(32)}_${"A".repeat(43)}`;
  const cases: [string, string, () => Promise<{ headers: Record<string, string>; secret?: string }>, string][] = [
    ["no credentials", "/mcp", async () => ({ headers: {} }), "missing-credentials"],
    [
      "Basic credentials",
      "/mcp",
      async () => ({ headers: { authorization: "Basic dXNlcjpodW50ZXIy" }, secret: "dXNlcjpodW50ZXIy" }),
      "wrong-scheme",
    ],
    [
      "a bearer that is neither key nor JWT",
      "/mcp/alpha",
      async () => ({ headers: bearer("opaque-secret-value"), secret: "opaque-secret-value" }),
      "malformed-credential",
    ],
    [
      "an unknown API key",
      "/mcp",
      async () => ({ headers: bearer(unknownKey), secret: "A".repeat(43) }),
      "unknown-or-revoked-api-key",
    ],
    [
      "a revoked API key",
      "/mcp",
      async () => {
        const { id, key, headers } = await makeKey({ principal: "revoked-one" }, VARS);
        expect((await admin("DELETE", `/api-keys/${id}`, undefined, VARS)).status).toBe(200);
        // mgw_<32 hex>_<secret>: the secret is base64url, which may itself hold "_".
        return { headers, secret: key.slice(key.indexOf("_", "mgw_".length) + 1) };
      },
      "unknown-or-revoked-api-key",
    ],
    [
      "an expired token",
      "/mcp",
      async () =>
        ((token) => ({ headers: bearer(token), secret: token.split(".")[2] }))(
          await sign(claims({ exp: Math.floor(Date.now() / 1000) - 600 })),
        ),
      "token-expired",
    ],
    [
      "a token signed by an unpublished key",
      "/mcp",
      async () => ((token) => ({ headers: bearer(token), secret: token.split(".")[2] }))(await strangerToken("nobody")),
      "token-unknown-key",
    ],
  ];

  it.each(cases)(
    "%s: one event with why, route and source, never the credential",
    async (_, path, credential, reason) => {
      const source = newSource();
      const { headers, secret } = await credential();
      const response = await attempt(path, source, headers);
      expect(response.status).toBe(401);
      const [event, ...more] = await eventsOf(source, 1);
      expect(more).toEqual([]);
      expect(event).toMatchObject({
        "mcp.method.name": "(authentication)",
        "user.id": "(unauthenticated)",
        "gateway.route": path,
        "gateway.outcome": "error",
        "gateway.auth.failure": reason,
        "error.type": reason,
        "http.request.method": "POST",
        "http.response.status_code": 401,
        "rpc.response.status_code": "-32001",
        "user_agent.original": "probe/1.0",
        "client.address": source,
      });
      expect(event["gateway.error.message"]).toBe(((await response.json()) as Json).error.message);
      if (secret) expect(JSON.stringify(event)).not.toContain(secret);
    },
  );

  it("a wrong admin token: recorded on /admin, without the token tried", async () => {
    const source = newSource();
    const tried = "guessed-admin-token-123";
    const response = await gatewayFetch(
      "/admin/api-keys",
      { headers: { authorization: `Bearer ${tried}`, "cf-connecting-ip": source } },
      VARS,
    );
    expect(response.status).toBe(401);
    const [event] = await eventsOf(source, 1);
    expect(event).toMatchObject({
      "gateway.route": "/admin",
      "gateway.auth.failure": "wrong-admin-token",
      "http.request.method": "GET",
      "http.response.status_code": 401,
    });
    expect(event["rpc.response.status_code"]).toBeUndefined();
    expect(JSON.stringify(event)).not.toContain(tried);
  });

  it.each([
    ["a wrong admin token", "guessed-console-token-456", "wrong-admin-token"],
    ["no admin token", "", "missing-admin-token"],
  ])("a console sign-in with %s: recorded on the sign-in route, without the token tried", async (_, tried, reason) => {
    const source = newSource();
    const response = await signInAttempt(tried, source);
    expect(response.status).toBe(401);
    expect(await response.text()).toContain("That is not the admin token");
    const [event, ...more] = await eventsOf(source, 1);
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      "gateway.route": "/admin/console/sign-in",
      "gateway.auth.failure": reason,
      "http.request.method": "POST",
      "http.response.status_code": 401,
      "client.address": source,
    });
    if (tried !== "") expect(JSON.stringify(event)).not.toContain(tried);
  });

  it("GET / with a bad credential: it answers that authentication is required and records the failure", async () => {
    const source = newSource();
    const tried = "opaque-home-secret";
    const response = await gatewayFetch("/", { headers: { ...bearer(tried), "cf-connecting-ip": source } }, VARS);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    expect(body.upstreams).toBeUndefined();
    expect(body.authentication).toMatch(/^required/);
    const [event, ...more] = await eventsOf(source, 1);
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      "gateway.route": "/",
      "gateway.auth.failure": "malformed-credential",
      "http.request.method": "GET",
      "http.response.status_code": 200,
      "gateway.error.message": body.authentication,
    });
    expect(JSON.stringify(event)).not.toContain(tried);
  });

  it("an identity-provider outage (503) is recorded as such", async () => {
    const source = newSource();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const down = authVars(jwtAuth("http://127.0.0.1:9/jwks.json"));
    expect((await attempt("/mcp", source, bearer(await sign(claims())), down)).status).toBe(503);
    const [event] = await eventsOf(source, 1);
    expect(event).toMatchObject({
      "gateway.auth.failure": "idp-unavailable",
      "http.response.status_code": 503,
      "rpc.response.status_code": "-32603",
    });
  });
});

describe("a flood of failed authentications", () => {
  it(`records ${PER_SOURCE} a minute from one source, then one summary counting the rest`, async () => {
    const source = newSource();
    const flood = 25;
    const answers = await Promise.all(
      Array.from({ length: flood }, (_, i) => attempt("/mcp", source, i % 2 === 0 ? {} : bearer("nonsense"))),
    );
    expect(answers.every((r) => r.status === 401)).toBe(true);
    const recorded = await eventsOf(source, PER_SOURCE);
    expect(recorded).toHaveLength(PER_SOURCE);
    expect(recorded.every((event) => event["gateway.auth.suppressed"] === undefined)).toBe(true);

    // The minute ends; the next failure of any source brings the summary of the ones left out.
    vi.setSystemTime(Date.now() + 61_000);
    expect((await attempt("/mcp", newSource(), {})).status).toBe(401);
    const all = await eventsOf(source, PER_SOURCE + 1);
    expect(all).toHaveLength(PER_SOURCE + 1);
    const summary = all.find((event) => event["gateway.auth.failure"] === "suppressed");
    expect(summary).toMatchObject({
      "gateway.auth.suppressed": flood - PER_SOURCE,
      "gateway.route": "/mcp",
      "client.address": source,
    });
    const reasons = summary["gateway.auth.suppressed_reasons"] as Record<string, number>;
    expect(
      Object.keys(reasons).every((reason) => ["missing-credentials", "malformed-credential"].includes(reason)),
    ).toBe(true);
    expect(Object.values(reasons).reduce((a, b) => a + b, 0)).toBe(flood - PER_SOURCE);
    expect(Date.parse(summary["gateway.auth.suppressed_from"])).toBeLessThanOrEqual(
      Date.parse(summary["gateway.auth.suppressed_to"]),
    );
  });

  it(`records ${PER_ISOLATE} a minute from all sources together; the rest are summed up under "(other sources)"`, async () => {
    // A minute of its own: no other test's failures count towards it.
    vi.setSystemTime(Date.now() + 3_600_000);
    const prefix = `2001:db8:${crypto.randomUUID().slice(0, 4)}:`;
    const sources = Array.from({ length: PER_ISOLATE + 5 }, (_, i) => `${prefix}${i.toString(16)}::1`);
    for (const source of sources) expect((await attempt("/mcp", source, {})).status).toBe(401);
    const ours = (address: string) => address.startsWith(prefix);
    expect(await eventsOf(ours, PER_ISOLATE)).toHaveLength(PER_ISOLATE);
    vi.setSystemTime(Date.now() + 61_000);
    expect((await attempt("/mcp", newSource(), {})).status).toBe(401);
    const [summary] = await eventsOf("(other sources)", 1);
    expect(summary).toMatchObject({
      "gateway.auth.failure": "suppressed",
      "gateway.auth.suppressed": 5,
      "gateway.auth.suppressed_reasons": { "missing-credentials": 5 },
    });
    expect(await eventsOf(ours, PER_ISOLATE)).toHaveLength(PER_ISOLATE);
  });
  it(`console sign-in guesses are bounded like the rest: ${PER_SOURCE} a minute from one source, then a summary`, async () => {
    // A minute of its own, after the per-isolate test's: no other test's failures count towards it.
    vi.setSystemTime(Date.now() + 3 * 3_600_000);
    const source = newSource();
    const flood = 15;
    const answers = await Promise.all(Array.from({ length: flood }, (_, i) => signInAttempt(`guess-${i}`, source)));
    // docs/admin-api.md: 5 wrong tokens a minute per source are judged, the rest throttled (429); each is a failure.
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(ADMIN_FAILURES_PER_SOURCE);
    expect(statuses.filter((status) => status === 429)).toHaveLength(flood - ADMIN_FAILURES_PER_SOURCE);
    const recorded = await eventsOf(source, PER_SOURCE);
    expect(recorded).toHaveLength(PER_SOURCE);
    vi.setSystemTime(Date.now() + 61_000);
    expect((await signInAttempt("one-more-guess", newSource())).status).toBe(401);
    const all = await eventsOf(source, PER_SOURCE + 1);
    expect(all).toHaveLength(PER_SOURCE + 1);
    const summary = all.find((event) => event["gateway.auth.failure"] === "suppressed");
    expect(summary).toMatchObject({ "gateway.auth.suppressed": flood - PER_SOURCE, "gateway.route": SIGN_IN });
    // Recorded one by one or counted in the summary, every guess is there with its reason.
    const reasons: Record<string, number> = { ...summary["gateway.auth.suppressed_reasons"] };
    for (const event of all) {
      const reason = event["gateway.auth.failure"];
      if (event !== summary) reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    const throttled = flood - ADMIN_FAILURES_PER_SOURCE;
    expect(reasons).toEqual({ "wrong-admin-token": ADMIN_FAILURES_PER_SOURCE, "throttled-admin-token": throttled });
  });
});

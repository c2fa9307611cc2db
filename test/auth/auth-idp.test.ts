/**
 * The identity provider as a source of faults: the gateway's own JWKS cache (one fetch
 * in flight per isolate, a cooldown after every fetch, failed ones included, the last
 * good key set kept) and what a caller gets while the issuer's keys cannot be fetched
 * (503 with Retry-After, logged; a malformed token still 401). The issuer is the JWKS
 * fixture on loopback, one tag per test, switched between answering well, garbage,
 * HTML, 500, never, too much.
 */
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { authVars } from "../helpers/auth";
import { post, type Json, type Vars } from "../helpers/gateway";
import { bearer, claims, INIT, jwtAuth, sign, strangerToken } from "../helpers/jwt";

const jwks = inject("jwks");
/** The gateway's refetch cooldown, as README states it. */
const COOLDOWN_S = 30;
const JWKS_MAX_AGE_MS = 10 * 60_000;

/** A fresh issuer: its JWKS URL, vars naming it, and its controls. */
function issuer(): {
  vars: Vars;
  tag: string;
  fetches: () => Promise<number>;
  setMode: (mode: string) => Promise<void>;
} {
  const tag = `t${crypto.randomUUID().slice(0, 12)}`;
  const base = `${jwks.idpUrl}/${tag}`;
  return {
    tag,
    vars: authVars(jwtAuth(`${base}/jwks.json`)),
    fetches: async () => Number(await (await fetch(`${base}/fetches`)).text()),
    setMode: async (mode) => {
      expect((await fetch(`${base}/mode/${mode}`, { method: "POST" })).status).toBe(204);
    },
  };
}

const initialize = (vars: Vars, token: string) => post("/mcp", INIT, { vars, headers: bearer(token) });

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("the JWKS cache", () => {
  it("40 concurrent tokens with made-up kids cost one JWKS fetch, and unknown kids within the cooldown none", async () => {
    const idp = issuer();
    const tokens = await Promise.all(Array.from({ length: 40 }, () => strangerToken(crypto.randomUUID())));
    const answers = await Promise.all(tokens.map((token) => initialize(idp.vars, token)));
    expect(answers.map((r) => r.status)).toEqual(tokens.map(() => 401));
    expect(answers[0]!.headers.get("www-authenticate")).toContain("a key the issuer does not publish");
    expect(await idp.fetches()).toBe(1);
    // A known key after that: no fetch; more unknown kids: none within the cooldown.
    expect((await initialize(idp.vars, await sign(claims()))).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await initialize(idp.vars, await strangerToken(`again-${i}`))).status).toBe(401);
    expect(await idp.fetches()).toBe(1);
  });

  it.each(["garbage", "html", "500"])(
    "a JWKS answering %s is fetched once for many requests, concurrent or not",
    async (mode) => {
      const idp = issuer();
      await idp.setMode(mode);
      vi.spyOn(console, "error").mockImplementation(() => {});
      const token = await sign(claims());
      const concurrent = await Promise.all(Array.from({ length: 20 }, () => initialize(idp.vars, token)));
      for (let i = 0; i < 5; i++) concurrent.push(await initialize(idp.vars, await strangerToken(`k${i}`)));
      expect(concurrent.map((r) => r.status)).toEqual(concurrent.map(() => 503));
      expect(await idp.fetches()).toBe(1);
    },
  );

  it.each([
    ["huge", "larger than"],
    ["many-keys", "keys"],
  ])("a JWKS %s is refused (bounded body and key count), and logged", async (mode, cause) => {
    const idp = issuer();
    await idp.setMode(mode);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    expect((await initialize(idp.vars, await sign(claims()))).status).toBe(503);
    const line = errors.mock.calls.map((args) => args.map(String).join(" ")).find((text) => text.includes("JWKS"));
    expect(line).toContain(cause);
  });

  it("keeps the last good key set when a refetch fails: known keys still verify, unknown kids wait for the cooldown", async () => {
    const idp = issuer();
    expect((await initialize(idp.vars, await sign(claims()))).status).toBe(200);
    await idp.setMode("500");
    vi.spyOn(console, "error").mockImplementation(() => {});
    // Past the key set's age: the next token refetches, the refetch fails, the kept keys verify it.
    vi.setSystemTime(Date.now() + JWKS_MAX_AGE_MS + 1_000);
    expect((await initialize(idp.vars, await sign(claims()))).status).toBe(200);
    expect(await idp.fetches()).toBe(2);
    // An unknown kid now cannot be told from a rotated key: 503 (not 401), and no fetch within the cooldown.
    const unknown = await initialize(idp.vars, await strangerToken("rotated?"));
    expect(unknown.status).toBe(503);
    expect((await initialize(idp.vars, await sign(claims()))).status).toBe(200);
    expect(await idp.fetches()).toBe(2);
    // After the cooldown the issuer is back: one refetch, and an unknown kid is an unknown kid again.
    await idp.setMode("ok");
    vi.setSystemTime(Date.now() + COOLDOWN_S * 1000 + 1_000);
    expect((await initialize(idp.vars, await strangerToken("still-unknown"))).status).toBe(401);
    expect(await idp.fetches()).toBe(3);
  });
});

describe("an identity-provider outage", () => {
  it.each(["garbage", "html", "500", "hang"])(
    "a JWKS answering %s: 503 with Retry-After, an actionable JSON-RPC error, a log line without the token",
    async (mode) => {
      const idp = issuer();
      await idp.setMode(mode);
      const errors = vi.spyOn(console, "error").mockImplementation(() => {});
      const token = await sign(claims());
      const response = await initialize(idp.vars, token);
      expect(response.status).toBe(503);
      const retryAfter = Number(response.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= COOLDOWN_S).toBe(true);
      expect(response.headers.get("www-authenticate")).toBeNull();
      const body = (await response.json()) as Json;
      expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32603 } });
      expect(body.error.message).toMatch(/identity provider.*retry in \d+ s/);
      expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|client_secret|\bat \w+ \(/);
      const logged = errors.mock.calls.map((args) => args.map(String).join(" "));
      expect(logged.some((line) => line.includes("JWKS"))).toBe(true);
      for (const line of logged) {
        expect(line).not.toContain(token);
        expect(line).not.toContain("client_secret");
      }
    },
  );

  it("an unreachable issuer: 503", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await initialize(authVars(jwtAuth("http://127.0.0.1:9/jwks.json")), await sign(claims()));
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("a malformed token is still 401 during the outage, and does not fetch", async () => {
    const idp = issuer();
    await idp.setMode("500");
    for (const token of ["a.b.c", "eyJhbGciOiJub25lIn0.e30."]) {
      const response = await initialize(idp.vars, token);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    expect(await idp.fetches()).toBe(0);
  });
});

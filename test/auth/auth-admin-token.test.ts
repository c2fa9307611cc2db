/**
 * The admin token against guessing: an ADMIN_TOKEN shorter than 32 characters keeps the
 * admin API and console closed with an error saying how to make one; wrong tokens from one
 * source (CF-Connecting-IP) are throttled after a few, on the admin API and at the
 * console's sign-in, concurrent guesses included, and a right token from a throttled
 * source is refused the same; other sources are not affected; a rate-limiting binding
 * named ADMIN_RATE_LIMIT throttles across isolates. Each test uses sources of its own.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ADMIN_VARS, TEST_ADMIN_TOKEN } from "../helpers/admin";
import { CONSOLE_ORIGIN, consoleGet, formInit } from "../helpers/console";
import { gatewayFetch, type Vars } from "../helpers/gateway";

/** docs/admin-api.md: wrong tokens a source may send per minute and isolate. */
const FAILURES_PER_SOURCE = 5;
const newSource = () => `198.51.100.${Math.floor(Math.random() * 250)}-${crypto.randomUUID().slice(0, 8)}`;

function adminGet(token: string, source: string, vars: Vars = ADMIN_VARS): Promise<Response> {
  const headers = { authorization: `Bearer ${token}`, "cf-connecting-ip": source };
  return gatewayFetch("/admin/filter-sets", { headers }, vars);
}

function signInAttempt(token: string, source: string, vars: Vars = ADMIN_VARS): Promise<Response> {
  const init = formInit({ token }, undefined);
  const headers = { ...(init.headers as Record<string, string>), "cf-connecting-ip": source };
  return gatewayFetch(`${CONSOLE_ORIGIN}/admin/console/sign-in`, { ...init, headers }, vars);
}

afterEach(() => {
  vi.useRealTimers();
});

describe("an ADMIN_TOKEN shorter than 32 characters", () => {
  const SHORT = "short-admin-token-31-characters";
  const vars = { ...ADMIN_VARS, ADMIN_TOKEN: SHORT };

  it("keeps the admin API closed, even to that token, and says how to make a long one", async () => {
    const response = await adminGet(SHORT, newSource(), vars);
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: string };
    expect(error).toContain("ADMIN_TOKEN is shorter than 32 characters");
    expect(error).toContain("openssl rand -hex 32");
    expect(error).not.toContain(SHORT);
  });

  it("keeps the console closed, with the same words", async () => {
    const page = await gatewayFetch(`${CONSOLE_ORIGIN}/admin/console/sign-in`, {}, vars);
    expect(page.status).toBe(500);
    const html = await page.text();
    expect(html).toContain("ADMIN_TOKEN is shorter than 32 characters");
    expect(html).toContain("openssl rand -hex 32");
    expect((await signInAttempt(SHORT, newSource(), vars)).status).toBe(500);
  });

  it("opens at 32 characters", async () => {
    const token = "x".repeat(32);
    expect((await adminGet(token, newSource(), { ...ADMIN_VARS, ADMIN_TOKEN: token })).status).toBe(200);
  });
});

describe("guesses at the admin token", () => {
  it("on the admin API: throttled after a few from one source, the right token too, till the minute ends", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const source = newSource();
    for (let i = 0; i < FAILURES_PER_SOURCE; i++) expect((await adminGet(`guess-${i}`, source)).status).toBe(401);
    const throttled = await adminGet("guess-more", source);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    const { error } = (await throttled.json()) as { error: string };
    expect(error).toMatch(/too many wrong admin tokens from this address; retry after \d+ seconds/);
    // A right guess now learns nothing; another source is not affected.
    expect((await adminGet(TEST_ADMIN_TOKEN, source)).status).toBe(429);
    expect((await adminGet(TEST_ADMIN_TOKEN, newSource())).status).toBe(200);
    vi.setSystemTime(Date.now() + 61_000);
    expect((await adminGet(TEST_ADMIN_TOKEN, source)).status).toBe(200);
  });

  it("at the console's sign-in: of 200 sent at once, only the first few are judged", async () => {
    const source = newSource();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => signInAttempt(`guess-${i}`, source)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(FAILURES_PER_SOURCE);
    expect(statuses.filter((status) => status === 429)).toHaveLength(200 - FAILURES_PER_SOURCE);
    const throttled = answers.find((answer) => answer.status === 429)!;
    expect(await throttled.text()).toContain("too many wrong admin tokens from this address");
    await Promise.all(answers.filter((answer) => !answer.bodyUsed).map((answer) => answer.body?.cancel()));
    expect((await signInAttempt(TEST_ADMIN_TOKEN, source)).status).toBe(429);
    expect((await signInAttempt(TEST_ADMIN_TOKEN, newSource())).status).toBe(303);
  });

  it("with the ADMIN_RATE_LIMIT binding: throttled once the binding says the source is over", async () => {
    // The tight test binding (3 a minute) as ADMIN_RATE_LIMIT: it says "over" before this
    // isolate's own budget is used up.
    const vars = { ...ADMIN_VARS, ADMIN_RATE_LIMIT: (env as unknown as Record<string, unknown>)["RATE_LIMIT_TEST"] };
    const source = newSource();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await adminGet(`guess-${i}`, source, vars)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await adminGet(TEST_ADMIN_TOKEN, source, vars)).status).toBe(429);
  });

  it("leaves a signed-in console working while its address is throttled (its own calls are no guesses)", async () => {
    // The console's own calls to the API carry the user's address: they are not throttled with it.
    const source = newSource();
    const signedIn = await signInAttempt(TEST_ADMIN_TOKEN, source);
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
    for (let i = 0; i < FAILURES_PER_SOURCE; i++) expect((await adminGet(`guess-${i}`, source)).status).toBe(401);
    expect((await adminGet(TEST_ADMIN_TOKEN, source)).status).toBe(429);
    const page = await consoleGet("/personas", undefined, {}, { cookie, "cf-connecting-ip": source });
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain("too many wrong admin tokens");
    // Requests from another source (this file's own, test/helpers/gateway.ts) are untouched.
    const unsourced = { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } };
    expect((await gatewayFetch("/admin/filter-sets", unsourced, ADMIN_VARS)).status).toBe(200);
  });
});

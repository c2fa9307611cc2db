/**
 * What the admin-token throttle counts as one source: an IPv6 address by its /64 network,
 * whatever textual form CF-Connecting-IP gives it, on the isolate's budget and in the key
 * of the ADMIN_RATE_LIMIT binding; an IPv4-mapped IPv6 address as the IPv4 address; and a
 * throttled source stays throttled when a guesser floods the isolate with fresh sources.
 * Each test uses networks of its own.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { judgeAdminAttempt } from "../../src/auth/admin-throttle";
import { sourceKey } from "../../src/auth/source-key";
import { ADMIN_VARS, TEST_ADMIN_TOKEN } from "../helpers/admin";
import { gatewayFetch, type Vars } from "../helpers/gateway";

/** docs/admin-api.md: wrong tokens a source may send per minute and isolate; sources tracked per isolate. */
const FAILURES_PER_SOURCE = 5;
const TRACKED_SOURCES = 10_000;

const hex16 = () => Math.floor(Math.random() * 0x10000).toString(16);
/** A /64 of the documentation range no other test uses: "2001:db8:<a>:<b>". */
const newNetwork = () => `2001:db8:${hex16()}:${hex16()}`;

function adminGet(token: string, source: string, vars: Vars = ADMIN_VARS): Promise<Response> {
  const headers = { authorization: `Bearer ${token}`, "cf-connecting-ip": source };
  return gatewayFetch("/admin/filter-sets", { headers }, vars);
}

describe("the throttle's source key", () => {
  it.each([
    ["2001:db8:a:b::1", "2001:db8:a:b::/64"],
    ["2001:0DB8:000A:000B:0000:0000:0000:0002", "2001:db8:a:b::/64"],
    ["2001:db8:a:b:ffff:ffff:ffff:ffff", "2001:db8:a:b::/64"],
    ["[2001:db8:a:b::3]", "2001:db8:a:b::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::", "0:0:0:0::/64"],
    ["64:ff9b::192.0.2.1", "64:ff9b:0:0::/64"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::FFFF:c000:201", "192.0.2.1"],
    ["0:0:0:0:0:ffff:192.0.2.1", "192.0.2.1"],
    ["192.0.2.1", "192.0.2.1"],
    ["unknown", "unknown"],
    ["1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8:9"],
    ["1::2::3", "1::2::3"],
    ["192.0.2.256", "192.0.2.256"],
  ])("%s is counted as %s", (source, key) => {
    expect(sourceKey(source)).toBe(key);
  });
});

describe("an IPv6 network", () => {
  it("is one source: addresses of one /64, in any form, share the budget; the next /64 does not", async () => {
    const net = newNetwork();
    const [a, b] = net.split(":").slice(2);
    const forms = [
      `${net}::1`,
      `${net}:0:0:0:2`,
      `2001:0db8:${a!.padStart(4, "0")}:${b!.padStart(4, "0")}:1234:5678:9abc:def0`,
      `${net.toUpperCase()}::FFFF`,
      `${net}::5%eth0`,
    ];
    for (const [i, source] of forms.entries()) expect((await adminGet(`guess-${i}`, source)).status).toBe(401);
    expect((await adminGet(TEST_ADMIN_TOKEN, `${net}:aaaa::7`)).status).toBe(429);
    const next = `2001:db8:${a}:${((parseInt(b!, 16) + 1) % 0x10000).toString(16)}::1`;
    expect((await adminGet(TEST_ADMIN_TOKEN, next)).status).toBe(200);
  });

  it("is one key of the ADMIN_RATE_LIMIT binding", async () => {
    // The tight test binding (3 a minute): over on the fourth failure, before this isolate's own budget.
    const vars = { ...ADMIN_VARS, ADMIN_RATE_LIMIT: (env as unknown as Record<string, unknown>)["RATE_LIMIT_TEST"] };
    const net = newNetwork();
    const statuses: number[] = [];
    for (let i = 1; i <= 4; i++) statuses.push((await adminGet(`guess-${i}`, `${net}::${i}`, vars)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it("an IPv4-mapped address is its IPv4 address", async () => {
    const v4 = `203.0.113.${Math.floor(Math.random() * 256)}`;
    const [, , c, d] = v4.split(".").map(Number);
    const mapped = [`::ffff:${v4}`, `::FFFF:cb00:${((c! << 8) | d!).toString(16)}`, v4, `0:0:0:0:0:ffff:${v4}`, v4];
    for (const [i, source] of mapped.entries()) expect((await adminGet(`guess-${i}`, source)).status).toBe(401);
    expect((await adminGet(TEST_ADMIN_TOKEN, v4)).status).toBe(429);
    expect((await adminGet(TEST_ADMIN_TOKEN, `::ffff:${v4}`)).status).toBe(429);
  });
});

describe("a throttled source", () => {
  it("stays throttled when a guesser floods the isolate with more fresh sources than it tracks", async () => {
    const throttled = `${newNetwork()}::1`;
    for (let i = 0; i < FAILURES_PER_SOURCE; i++) expect((await adminGet(`guess-${i}`, throttled)).status).toBe(401);
    expect((await adminGet(TEST_ADMIN_TOKEN, throttled)).status).toBe(429);
    // One wrong guess from each of more fresh /64s than the isolate tracks, as the admin API judges them.
    const flood = `2001:db8:${hex16()}`;
    for (let i = 0; i <= TRACKED_SOURCES; i++) {
      expect((await judgeAdminAttempt(`${flood}:${i.toString(16)}::1`, false, undefined)).verdict).toBe("wrong");
    }
    expect((await adminGet(TEST_ADMIN_TOKEN, throttled)).status).toBe(429);
  });
});

/**
 * An audit trail that must not lie or vanish, through the real Queue and R2 inside
 * workerd: an event whose caller or call is hostile in size still reaches /admin/audit
 * (every field bounded in UTF-8 bytes, an event over the Queue's limit cut down to a
 * minimal one that says so); secrets are redacted however their key is spelled and when
 * they travel as name/value pairs; a call is found by the name the client used and by
 * its qualified name `<upstream>___<name>`, old events included.
 */
import { env } from "cloudflare:workers";
import { importJWK, SignJWT, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  cutToBytes,
  jsonBytes,
  MAX_AUDIT_ROLES,
  MAX_EVENT_BYTES,
  MAX_FIELD_BYTES,
  TRIMMED_MARKER,
  trimEvent,
} from "../../src/features/audit/audit-bounds";
import { MAX_BATCH_BYTES, MAX_BATCH_MESSAGES, sendBatches } from "../../src/features/audit/audit-queue";
import { secretKeyMatcher } from "../../src/features/audit/secret-keys";
import { DEFAULT_REDACT_KEYS } from "../../src/features/audit/audit-config";
import type { AuditEvent } from "../../src/features/audit/audit-event";
import { writeAuditBatch } from "../../src/features/audit/audit-log";
import { call, eventsOnceWritten, readAudit, upstreamVars } from "../helpers/audit";
import { admin, authVars } from "../helpers/auth";
import { answer, initialize, type Json } from "../helpers/gateway";

const utf8 = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

describe("an event never vanishes for its size", () => {
  const jwks = inject("jwks");
  const ISSUER = "https://idp.test/realms/audit";
  const AUDIENCE = "http://gateway.test/mcp";
  const ROLE = `audit-big-${crypto.randomUUID().slice(0, 8)}`;
  const PERSONA = `audit-big-${crypto.randomUUID().slice(0, 8)}`;
  const authOn = authVars({ jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url, rolesClaim: "roles" } });

  async function sign(claims: JWTPayload): Promise<string> {
    const key = jwks.keys.rsa;
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: key.alg!, kid: key.kid!, typ: "JWT" })
      .sign(await importJWK(key, key.alg!));
  }

  beforeAll(async () => {
    expect((await admin("PUT", `/personas/${PERSONA}`, { roles: [ROLE], allow: ["*"] }, authOn)).status).toBe(200);
  });
  afterAll(async () => {
    await admin("DELETE", `/personas/${PERSONA}`, undefined, authOn);
  });

  it("a valid token with 40,000 roles (a 107 KB header): the call succeeds and its event is in /admin/audit, roles bounded and marked", async () => {
    const { name, vars: upstreamOnly } = upstreamVars();
    const vars = { ...upstreamOnly, ...authOn };
    // Space-separated, as some identity providers send scopes and roles.
    const roles = [ROLE, ...Array.from({ length: 40_000 }, (_, i) => String.fromCharCode(97 + (i % 26)))].join(" ");
    const token = await sign({ sub: "many-roles", roles });
    expect(token.length).toBeGreaterThan(100_000);
    const headers = { authorization: `Bearer ${token}` };
    const { session } = await initialize("/mcp", { vars, headers });
    const reply = await answer(await call("/mcp", session, `${name}___whoami`, { q: 1 }, vars, headers));
    expect(reply.result?.isError).not.toBe(true);

    const [event] = await eventsOnceWritten(`upstream=${name}`, 1);
    expect(event).toMatchObject({
      "user.id": "many-roles",
      "gateway.persona": PERSONA,
      "gen_ai.tool.name": `${name}___whoami`,
      "gen_ai.tool.call.arguments": { q: 1 },
      "gateway.outcome": "success",
    });
    expect(event["user.roles"][0]).toBe(ROLE);
    expect(event["user.roles"].length).toBeLessThanOrEqual(MAX_AUDIT_ROLES);
    expect(event["gateway.user.roles_count"]).toBe(40_001);
    expect(event["gateway.truncated"]).toBe(true);
    expect(event["gateway.truncated_fields"]).toContain("user.roles");
    expect(utf8(event)).toBeLessThanOrEqual(MAX_EVENT_BYTES);
  });

  it("an email claim of 20,000 control characters is cut by the UTF-8 bytes of its JSON text (six each), not by its length", async () => {
    const { name, vars: upstreamOnly } = upstreamVars();
    const vars = { ...upstreamOnly, ...authOn };
    const headers = {
      authorization: `Bearer ${await sign({ sub: "odd-email", email: `who-${"\u0001".repeat(20_000)}`, roles: [ROLE] })}`,
    };
    const { session } = await initialize("/mcp", { vars, headers });
    expect((await answer(await call("/mcp", session, `${name}___whoami`, {}, vars, headers))).result).toBeDefined();
    const [event] = await eventsOnceWritten(`upstream=${name}`, 1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the email was made of U+0001 on purpose.
    expect(event["user.email"]).toMatch(/^who-\u0001+…$/);
    expect(utf8(event["user.email"]) - 2).toBeLessThanOrEqual(MAX_FIELD_BYTES);
    expect(utf8(event["user.email"]) - 2).toBeGreaterThan(MAX_FIELD_BYTES - 8);
    expect(event["gateway.truncated_fields"]).toEqual(["user.email"]);
  });

  it("an event whose fields are over the limit even without parameters is cut to a minimal event that names what it dropped", () => {
    const base: AuditEvent = {
      "gateway.event_id": "e".repeat(32),
      timestamp: new Date().toISOString(),
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "good___echo",
      "gen_ai.tool.call.arguments": { text: "é".repeat(100_000) },
      "mcp.protocol.version": "2025-11-25",
      "user.id": "u".repeat(200_000),
      "user.roles": Array.from({ length: 40_000 }, () => "role"),
      "gateway.route": "/mcp",
      "gateway.outcome": "success",
      "gateway.error.message": "x".repeat(50_000),
      "gateway.duration_ms": 3,
    };
    const cut = trimEvent(base);
    expect(utf8(cut)).toBeLessThanOrEqual(MAX_EVENT_BYTES);
    expect(cut).toMatchObject({
      "gateway.event_id": base["gateway.event_id"],
      timestamp: base.timestamp,
      "gen_ai.tool.name": "good___echo",
      "gateway.outcome": "success",
      "gateway.truncated": true,
    });
    expect(cut["user.id"]).toMatch(/^u+…$/);
    expect(new Set(cut["gateway.truncated_fields"])).toEqual(
      new Set(["user.id", "user.roles", "gen_ai.tool.call.arguments", "gateway.error.message"]),
    );
    expect(cut["user.roles"]).toBeUndefined();
    expect(cut["gen_ai.tool.call.arguments"]).toBeUndefined();
  });

  it("an event over the limit only by its parameters keeps the rest and cuts them, in UTF-8 bytes", () => {
    const event: AuditEvent = {
      "gateway.event_id": "f".repeat(32),
      timestamp: new Date().toISOString(),
      "mcp.method.name": "tools/call",
      "gen_ai.tool.call.arguments": { big: "€".repeat(60_000) },
      "mcp.protocol.version": "2025-11-25",
      "user.id": "ada",
      "gateway.route": "/mcp",
      "gateway.outcome": "success",
      "gateway.duration_ms": 1,
    };
    const cut = trimEvent(event);
    expect(utf8(cut)).toBeLessThanOrEqual(MAX_EVENT_BYTES);
    expect(utf8(cut)).toBeGreaterThan(MAX_EVENT_BYTES - 16);
    expect(cut["gen_ai.tool.call.arguments"]).toMatch(
      new RegExp(`^\\{"big":"€+${TRIMMED_MARKER.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`),
    );
    expect(cut).toMatchObject({
      "gateway.params_trimmed": true,
      "gateway.params_bytes": jsonBytes(event["gen_ai.tool.call.arguments"]),
      "gateway.truncated_fields": ["gen_ai.tool.call.arguments"],
      "user.id": "ada",
    });
  });

  it.each([
    ["ASCII", "abcdef", 4, "abcd"],
    ["two-byte é", "éééé", 5, "éé"],
    ["a surrogate pair is never split", "a😀b", 4, "a"],
    ["a control character is six bytes as JSON writes it", "\u0001\u0001", 11, "\u0001"],
    ["a quote is two", '""', 3, '"'],
    ["fits whole", "ok", 2, "ok"],
  ])("cutToBytes: %s", (_, text, max, expected) => {
    expect(cutToBytes(text, max)).toBe(expected);
  });

  it("sendBatches: at most 100 messages and MAX_BATCH_BYTES a batch, events of the largest size two to a batch", () => {
    const event = (size: number, i: number): AuditEvent => ({
      "gateway.event_id": String(i),
      timestamp: "2026-01-01T00:00:00.000Z",
      "mcp.method.name": "x".repeat(size),
      "mcp.protocol.version": "v",
      "user.id": "u",
      "gateway.route": "/mcp",
      "gateway.outcome": "success",
      "gateway.duration_ms": 0,
    });
    expect(sendBatches(Array.from({ length: 250 }, (_, i) => event(10, i))).map((g) => g.length)).toEqual([
      100, 100, 50,
    ]);
    const largest = Array.from({ length: 5 }, (_, i) => event(MAX_EVENT_BYTES - 300, i));
    expect(largest.every((e) => utf8(e) <= MAX_EVENT_BYTES)).toBe(true);
    const groups = sendBatches(largest);
    expect(groups.map((g) => g.length)).toEqual([2, 2, 1]);
    for (const group of groups)
      expect(group.reduce((sum, e) => sum + utf8(e) + 100, 0)).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    expect(MAX_BATCH_MESSAGES).toBe(100);
  });
});

describe("secrets are redacted however their key is spelled", () => {
  // [key, secret?]: one call carries every row's key; each row checks its own value.
  const KEYS: readonly [string, boolean][] = [
    ["privateKey", true],
    ["PrivateKey", true],
    ["sshPrivateKey", true],
    ["private_key", true],
    ["PRIVATE_KEY", true],
    ["privatekey", true],
    ["pass_word", true],
    ["Password", true],
    ["db.password", true],
    ["pwd", true],
    ["passphrase", true],
    ["auth", true],
    ["Auth", true],
    ["basicAuth", true],
    ["x-auth", true],
    ["bearer", true],
    ["sessionKey", true],
    ["session_key", true],
    ["accessToken", true],
    ["accesstoken", true],
    ["refresh-token", true],
    ["client_secret", true],
    ["clientSecret", true],
    ["X-Api-Key", true],
    ["APIKey", true],
    ["apiKey", true],
    ["credentials", true],
    ["Set-Cookie", true],
    ["password1", true],
    ["password2", true],
    ["Password2FA", true],
    ["token2", true],
    ["apiKey2", true],
    ["Cookie2", true],
    ["api_key_2", true],
    ["refresh_token_v2", true],
    ["v2Token", true],
    ["auth2", true],
    ["pass", true],
    ["db_pass", true],
    ["dbPass", true],
    ["DB_PASS_2", true],
    ["passwd", true],
    ["author", false],
    ["oauth2", false],
    ["compass", false],
    ["bypass", false],
    ["passenger", false],
    ["passport_country", false],
    ["tokenizer2", false],
    ["authority", false],
    ["authored_by", false],
    ["oauth_provider", false],
    ["tokenizer", false],
    ["secretary", false],
    ["keyboard", false],
    ["passage", false],
    ["username", false],
    ["description", false],
  ];
  let args: Json;

  beforeAll(async () => {
    const { name, vars } = upstreamVars();
    const { session } = await initialize("/mcp", { vars });
    const sent = {
      ...Object.fromEntries(KEYS.map(([key], i) => [key, `value-${i}-of-${key}`])),
      headers: [
        { name: "Authorization", value: "Bearer pair-secret-1" },
        { key: "X-Api-Key", value: "pair-secret-2" },
        { header: "Cookie", content: "pair-secret-3" },
        { name: "Accept", value: "application/json" },
        { name: "DB_PASSWORD", value: "pair-secret-4", description: "kept" },
      ],
      tuples: [
        ["Authorization", "Bearer pair-secret-5"],
        ["Accept", "text/plain"],
      ],
    };
    expect((await answer(await call("/mcp", session, `${name}___whoami`, sent, vars))).result).toBeDefined();
    [{ "gen_ai.tool.call.arguments": args }] = await eventsOnceWritten(`upstream=${name}`, 1);
  });

  it.each(KEYS.map(([key, secret], i) => [key, secret, i] as const))("%s: redacted %s", (key, secret, i) => {
    expect(args[key]).toBe(secret ? "[redacted]" : `value-${i}-of-${key}`);
  });

  it("name/value pairs: the value of a secret name is redacted, other pairs and other members kept", () => {
    expect(args.headers).toEqual([
      { name: "Authorization", value: "[redacted]" },
      { key: "X-Api-Key", value: "[redacted]" },
      { header: "Cookie", content: "[redacted]" },
      { name: "Accept", value: "application/json" },
      { name: "DB_PASSWORD", value: "[redacted]", description: "kept" },
    ]);
    expect(args.tuples).toEqual([
      ["Authorization", "[redacted]"],
      ["Accept", "text/plain"],
    ]);
    expect(JSON.stringify(args)).not.toMatch(/pair-secret/);
  });

  it.each([
    [["ssn"], "ssn", true],
    [["ssn"], "user_ssn", true],
    [["ssn"], "lesson", false],
    [["*_note"], "myNote", true],
    [["*_note"], "notes", false],
    [["X-Custom-Secret"], "xCustomSecret", true],
    [["ssn"], "ssn2", true],
    [["x_*"], "x2Token", true],
    [["secret1*"], "secret12", true],
    [["secret1*"], "secret2", false],
  ])("configured patterns %j: %s → %s", (patterns, key, secret) => {
    expect(secretKeyMatcher(patterns)(key)).toBe(secret);
  });

  it("a hostile key costs no more than its length: a 1 MB key is redacted unread", () => {
    const isSecret = secretKeyMatcher(DEFAULT_REDACT_KEYS);
    expect(isSecret("token".repeat(200_000))).toBe(true);
    expect(isSecret(`${"a".repeat(1000)}Password`)).toBe(true);
  });
});

describe("audit queries by either name", () => {
  it("a call on /mcp/<upstream> is found by its name and by <upstream>___<name> (exact and glob)", async () => {
    const { name, vars } = upstreamVars();
    const { session } = await initialize(`/mcp/${name}`, { vars });
    await (await call(`/mcp/${name}`, session, "whoami", {}, vars)).text();
    const [event] = await eventsOnceWritten(`upstream=${name}`, 1);
    expect(event).toMatchObject({
      "gen_ai.tool.name": "whoami",
      "gateway.tool.qualified_name": `${name}___whoami`,
      "gateway.route": `/mcp/${name}`,
    });
    for (const tool of [`${name}___whoami`, `${name}___*`, `${name}___who?mi`]) {
      expect((await readAudit(`tool=${encodeURIComponent(tool)}`)).events.map((e) => e["gateway.event_id"])).toEqual([
        event["gateway.event_id"],
      ]);
    }
    expect((await readAudit(`tool=whoami&upstream=${name}`)).events).toHaveLength(1);
  });

  it("a call on /mcp carries the same qualified name", async () => {
    const { name, vars } = upstreamVars();
    const { session } = await initialize("/mcp", { vars });
    await (await call("/mcp", session, `${name}___whoami`, {}, vars)).text();
    const [event] = await eventsOnceWritten(`tool=${name}___whoami`, 1);
    expect(event).toMatchObject({
      "gen_ai.tool.name": `${name}___whoami`,
      "gateway.tool.qualified_name": `${name}___whoami`,
      "gateway.route": "/mcp",
    });
  });

  it("an event stored before the field existed is found by the names it has and by the qualified name of its route", async () => {
    const upstream = `old${crypto.randomUUID().slice(0, 8)}`;
    const now = Date.now();
    const old = (id: string, route: string, tool: string) => ({
      "gateway.event_id": id,
      timestamp: new Date(now).toISOString(),
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": tool,
      "mcp.protocol.version": "2025-11-25",
      "user.id": "anonymous",
      "gateway.route": route,
      "gateway.upstream": upstream,
      "gateway.outcome": "success" as const,
      "gateway.duration_ms": 1,
    });
    const events = [
      old(`${upstream}-1`, `/mcp/${upstream}`, "legacy_tool"),
      old(`${upstream}-2`, "/mcp", `${upstream}___other_tool`),
      old(`${upstream}-3`, `/mcp/${upstream}`, "sys___read_payload"),
    ];
    await writeAuditBatch(
      env.PAYLOADS,
      events,
      events.map((e) => e["gateway.event_id"]),
    );
    const ids = async (tool: string) =>
      (await readAudit(`tool=${encodeURIComponent(tool)}&upstream=${upstream}`)).events.map(
        (e) => e["gateway.event_id"],
      );
    expect(await ids("legacy_tool")).toEqual([`${upstream}-1`]);
    expect(await ids(`${upstream}___legacy_tool`)).toEqual([`${upstream}-1`]);
    expect(await ids(`${upstream}___other_tool`)).toEqual([`${upstream}-2`]);
    expect(await ids(`${upstream}___*`)).toEqual([`${upstream}-1`, `${upstream}-2`]);
    expect(await ids("sys___read_payload")).toEqual([`${upstream}-3`]);
  });
});

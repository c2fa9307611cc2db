/**
 * What the first call after a sign-in costs upstream: the requests the protocol needs (learn
 * the upstream's era, open its session, the call) and one read of the caller's sealed token,
 * however many of those requests carry it. The fixture upstream lists the requests each
 * resource received (test/fixtures/oauth-upstream.ts); the token reads are counted on the
 * Worker's own KV binding, wrapped.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { request, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";
import { countingBinding } from "../helpers/counting-binding";
import { Browser } from "../helpers/sign-in";
import { callerSeen, linkOf, signInWorld } from "../helpers/sign-in-world";

/** Where storage/upstream-tokens.ts keeps users' sealed tokens. */
const TOKEN_PREFIX = "upstream-token/";
/** A modern client that answers questions: a call of its to a sessionful 2025 side would be bridged. */
const ASKS = { elicitation: {} };
/** Each world's upstreams are new to the gateway (fresh URLs): nothing of their era is known before its test. */
const worlds = [signInWorld(), signInWorld()] as const;
/** What the first call needs upstream when nothing of the upstream is known: its era, a 2025 handshake, the call. */
const FIRST_CALL = ["POST server/discover", "POST initialize", "POST notifications/initialized", "POST tools/call"];

/** The gateway's KV, counting reads of sealed tokens. */
function countingKv(counts: { tokenReads: number }): KVNamespace {
  const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;
  return countingBinding(kv, (method, [key]) => {
    if ((method === "get" || method === "getWithMetadata") && String(key).startsWith(TOKEN_PREFIX)) counts.tokenReads++;
  });
}

/** The requests `world`'s `/acme<label>/mcp` received so far. */
async function upstreamRequests(world: ReturnType<typeof signInWorld>): Promise<string[]> {
  return (await (await fetch(`${world.origin}/acme${world.label}/requests`)).json()) as string[];
}

/** Signs a fresh caller of `world` in (asked by a tool error on /mcp); returns who and the 2025 session. */
async function signedInCaller(world: ReturnType<typeof signInWorld>) {
  const who = await world.caller();
  const id = await world.session(who);
  const link = linkOf(await world.callTool(who, id, "acme___whoami"));
  const done = await new Browser(world.vars).signIn(link, `${who.principal}@idp`);
  expect(done.status, await done.clone().text()).toBe(200);
  return { who, id };
}

describe("the first call after a sign-in", () => {
  it("a 2025 client's: era, handshake and call upstream, one sealed-token read", async () => {
    const world = worlds[0];
    const { who, id } = await signedInCaller(world);
    const before = (await upstreamRequests(world)).length;
    const counts = { tokenReads: 0 };
    const vars: Vars = { ...world.vars, GATEWAY_KV: countingKv(counts) };
    const params = { name: "acme___whoami", arguments: {} };
    const answered: Json = await request("/mcp", id, "tools/call", params, { vars, headers: who.headers });
    expect(callerSeen(answered).sub).toBe(`${who.principal}@idp`);
    // The upstream's era was not learned before the sign-in (its 401 says nothing of it): it is now, once.
    expect((await upstreamRequests(world)).slice(before)).toEqual(FIRST_CALL);
    expect(counts.tokenReads).toBe(1);
  });

  it("a 2026-07-28 client's (one answering questions): no bridge for a stateless side, one token read", async () => {
    const world = worlds[1];
    const { who } = await signedInCaller(world);
    const before = (await upstreamRequests(world)).length;
    const counts = { tokenReads: 0 };
    const vars: Vars = { ...world.vars, GATEWAY_KV: countingKv(counts) };
    const params = { name: "acme___whoami", arguments: {} };
    const first = await modern("/mcp", "tools/call", params, { capabilities: ASKS, vars, headers: who.headers });
    expect(callerSeen(first).sub).toBe(`${who.principal}@idp`);
    expect((await upstreamRequests(world)).slice(before)).toEqual(FIRST_CALL);
    expect(counts.tokenReads).toBe(1);
    // The next call finds the client's session with the upstream: the call alone.
    const next = (await upstreamRequests(world)).length;
    const second = await modern("/mcp", "tools/call", params, { capabilities: ASKS, vars, headers: who.headers });
    expect(callerSeen(second).sub).toBe(`${who.principal}@idp`);
    expect((await upstreamRequests(world)).slice(next)).toEqual(["POST tools/call"]);
    expect(counts.tokenReads).toBe(2);
  });
});

/**
 * The upstream target of a call, resolved once (src/upstream/upstream-target.ts): a failed
 * era discovery fails the call with an error naming the upstream, what failed and what to
 * check (it was taken for a 2025 upstream and probed again in the call bridge); a stateless
 * 2025 side is never sent through the call bridge's Durable Object. Real upstreams on
 * loopback: the faulty one (test/fixtures/faulty-upstream.ts, `discover-503`, counting what
 * each path received) and beta, an SDK server without sessions (test/fixtures/sdk-upstream.ts).
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { countingBinding } from "../helpers/counting-binding";
import type { Json, Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const faulty = inject("faultyUpstreamUrl");
const { beta } = inject("fixtureUrls");
/** A modern client that answers questions: its calls to a 2025 side that asks are bridged. */
const ASKS = { elicitation: {} };

/** BRIDGED_CALLS, counting the bridged calls' objects asked for. */
function countingBridge(counts: { objects: number }): unknown {
  const namespace = (env as unknown as { BRIDGED_CALLS: DurableObjectNamespace }).BRIDGED_CALLS;
  return countingBinding(namespace, (method) => {
    if (method === "get") counts.objects++;
  });
}

function vars(name: string, url: string, extra: Vars = {}): Vars {
  return { UPSTREAMS: JSON.stringify([{ name, url, timeoutMs: 5_000 }]), ...extra };
}

describe("the upstream target of a call", () => {
  it("a failed era discovery answers the call with what failed and what to check, probed once", async () => {
    const tag = crypto.randomUUID();
    const counts = { objects: 0 };
    const answer: Json = await modern(
      "/mcp/flaky",
      "tools/call",
      { name: "echo", arguments: { text: "hi" } },
      {
        capabilities: ASKS,
        vars: vars("flaky", `${faulty}/discover-503/${tag}`, { BRIDGED_CALLS: countingBridge(counts) }),
      },
    );
    expect(answer.error?.code, JSON.stringify(answer)).toBe(-32010);
    expect(answer.error.message).toContain('upstream "flaky" answered HTTP 503');
    expect(answer.error.message).toContain("server/discover failed");
    expect(answer.error.message).toContain("check its URL and that it is up");
    expect(answer.error.data).toMatchObject({ upstream: "flaky", reason: "http-status" });
    const received = (await (await fetch(`${faulty}/counts/discover-503/${tag}`)).json()) as Record<string, number>;
    // Never taken for a 2025 upstream: no handshake, no call, no second probe from a bridged call.
    expect(received).toEqual({ "server/discover": 1 });
    expect(counts.objects).toBe(0);
  });

  it("a stateless 2025 side answers a modern client that answers questions directly, not through the call bridge", async () => {
    const counts = { objects: 0 };
    const upstream = vars("beta", beta, { BRIDGED_CALLS: countingBridge(counts) });
    for (const text of ["first", "second"]) {
      const answer: Json = await modern(
        "/mcp/beta",
        "tools/call",
        { name: "echo", arguments: { text } },
        { capabilities: ASKS, vars: upstream },
      );
      expect(answer.result?.content?.[0]?.text, JSON.stringify(answer)).toContain(text);
    }
    expect(counts.objects).toBe(0);
  });
});

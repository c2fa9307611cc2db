/**
 * The call record, read after real calls through an app built like the Worker's (an
 * observer takes each completed record): each field written by the layer that knows it,
 * as a value, for a filtered call, an offloaded one, one offloaded while it streamed, and
 * one whose upstream is down. Real SDK and raw upstreams, real KV and R2, inside workerd.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import type { CallRecord } from "../../src/context/call-record";
import { createApp } from "../../src/gateway";
import { admin } from "../helpers/admin";
import { initialize, post, type GatewayTarget, type Json, type Vars } from "../helpers/gateway";

// A rule that also writes non-ASCII text: bytes saved are UTF-8 bytes, not UTF-16 code units.
const FILTER_SET = JSON.stringify({
  tools: {
    alpha___get_user: {
      retain: ["/userInfo/login"],
      patches: [{ op: "add", path: "/userInfo/city", value: "Parigné-le-Pôlin ✓" }],
    },
  },
});

/** Calls `name` in a new session on an observed app; the record of that call and its answer's text. */
async function recordedCall(name: string, args: Json, vars: Vars = {}): Promise<{ record: CallRecord; text: string }> {
  const records: { record: CallRecord; method: string }[] = [];
  const app = createApp({
    observers: [
      (record, _ctx, message) =>
        void (
          message.kind === "request" && records.push({ record: { ...record }, method: message.wire.message.method })
        ),
    ],
  }) as unknown as GatewayTarget;
  const { session } = await initialize("/mcp", { vars, target: app });
  const response = await post(
    "/mcp",
    { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } },
    { session, vars, target: app },
  );
  const text = await response.text();
  const calls = records.filter((r) => r.method === "tools/call");
  expect(calls).toHaveLength(1);
  return { record: calls[0]!.record, text };
}

const utf8 = (text: string) => new TextEncoder().encode(text).length;

// Through the admin API, which keeps the isolate's copies in step (docs/development.md): the suite shares them and KV.
afterEach(async () => {
  await admin("DELETE", "/filter-sets/default");
});

describe("the call record", () => {
  it("of a filtered call: upstream, status, bytes both ways, set and bytes saved, duration", async () => {
    const unfiltered = await recordedCall(
      "alpha___get_user",
      { login: "ada", kind: "person" },
      { FILTER_CACHE_TTL_MS: "0" },
    );
    expect((await admin("PUT", "/filter-sets/default", FILTER_SET)).status).toBe(200);
    const { record, text } = await recordedCall(
      "alpha___get_user",
      { login: "ada", kind: "person" },
      { FILTER_CACHE_TTL_MS: "0" },
    );
    expect(JSON.parse(text).result.structuredContent).toEqual({
      userInfo: { login: "ada", city: "Parigné-le-Pôlin ✓" },
    });
    expect(record).toMatchObject({
      upstream: "alpha",
      upstreamStatus: 200,
      filterSet: "default",
      filterRule: "alpha___get_user",
      filterShadow: false,
    });
    expect(record.bytesToClient).toBe(utf8(text));
    // The upstream sent what it sends unfiltered; the client got less, by what the filter saved.
    expect(record.bytesFromUpstream).toBe(unfiltered.record.bytesFromUpstream);
    expect(record.bytesFromUpstream).toBeGreaterThan(record.bytesToClient!);
    expect(record.bytesSaved).toBe(utf8(unfiltered.text) - utf8(text));
    expect(record.durationMs).toBeGreaterThanOrEqual(0);
    expect(record.failure).toBeUndefined();
    expect(unfiltered.record.filterSet).toBeUndefined();
    expect(unfiltered.record.bytesToClient).toBe(utf8(unfiltered.text));
  });

  it("of an offloaded call: the payload id the client was given", async () => {
    const { record, text } = await recordedCall(
      "alpha___big_list",
      { count: 200 },
      { OFFLOAD: JSON.stringify({ thresholdBytes: 1000 }) },
    );
    const envelope = JSON.parse(JSON.parse(text).result.content[0].text) as Json;
    expect(record.payloadId).toMatch(/^[0-9a-f]{32}$/);
    expect(record.payloadId).toBe(envelope.payloadId);
    expect(record.bytesFromUpstream).toBeGreaterThan(1000);
    expect(record.bytesToClient).toBe(utf8(text));
  });

  it("of a call offloaded while it streamed: the payload id, and every byte the upstream sent", async () => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url: inject("fixtureUrls").raw, timeoutMs: 60_000 }]) };
    const { record, text } = await recordedCall("raw___huge", { mb: 9 }, vars);
    const envelope = JSON.parse(JSON.parse(text).result.content[0].text) as Json;
    expect(record.payloadId).toBe(envelope.payloadId);
    expect(record.bytesFromUpstream).toBeGreaterThan(envelope.originalSize);
    expect(record.bytesToClient).toBe(utf8(text));
  });

  it("of a call whose upstream is down: the upstream and why", async () => {
    const vars = {
      UPSTREAMS: JSON.stringify([
        { name: "alpha", url: inject("fixtureUrls").alpha },
        { name: "down", url: "http://127.0.0.1:9/mcp", timeoutMs: 2000 },
      ]),
    };
    const { record, text } = await recordedCall("down___echo", { text: "x" }, vars);
    expect(JSON.parse(text).error.message).toMatch(/upstream "down" is unreachable/);
    expect(record).toMatchObject({ upstream: "down", failure: "unreachable" });
    expect(record.upstreamStatus).toBeUndefined();
    expect(record.payloadId).toBeUndefined();
  });
});

/**
 * End to end: the SDK v2 client's `listen()` (subscriptions/listen, 2026-07-28) through
 * the gateway started as README says, in front of a 2025 SDK upstream, on both routes:
 * the client accepts the acknowledgement, its list_changed handler fires when the
 * upstream's tool list changes. (Whether closing ends the upstream's stream is tested in
 * workerd, test/relay/subscriptions-listen.test.ts: under `wrangler dev` a client's disconnect
 * does not reach the Worker, neither as a cancelled body nor as `request.signal`.)
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { alphaBehindGateway } from "./alpha-behind-gateway.ts";

describe("an SDK v2 client listening through the gateway", () => {
  const gateway = alphaBehindGateway(".wrangler/e2e-modern-listen");

  it.each([
    ["/mcp", "alpha___"],
    ["/mcp/alpha", ""],
  ])("on %s: acknowledged, then told of a list change", async (path, prefix) => {
    const name = `e2e-listen-${crypto.randomUUID()}`;
    const modern = new ModernClient(
      { name, version: "2.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await modern.connect(new ModernTransport(new URL(`${gateway.url()}${path}`)));
    let changed!: () => void;
    const toldOfChange = new Promise<void>((resolve) => (changed = resolve));
    modern.setNotificationHandler("notifications/tools/list_changed", () => changed());
    const subscription = await modern.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
    const stats = async () => {
      const answer = await modern.callTool({ name: `${prefix}listen_stats`, arguments: { client: name } });
      return JSON.parse((answer.content as { text: string }[])[0]!.text) as { openStreams: number };
    };
    expect((await stats()).openStreams).toBe(1);
    await modern.callTool({ name: `${prefix}add_tool`, arguments: { name: "added_e2e" } });
    await toldOfChange;
    await subscription.close();
    await modern.close();
  });
});

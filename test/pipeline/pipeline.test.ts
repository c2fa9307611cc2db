/**
 * One pipeline for every message: a recording middleware, first in the list of an app
 * built like the Worker's, must see every kind of message a client sends (initialize and
 * other requests, notifications, its answers to server requests, the opening of the GET
 * stream) and every message an upstream sends toward the client (results, notifications,
 * server requests, GET-stream events), each with the caller's identity and the route,
 * on /mcp and on /mcp/<upstream>. Real SDK upstreams, real KV and R2, inside workerd.
 */
import { describe, expect, it } from "vitest";
import { readSse } from "../../src/core/sse";
import type { Middleware } from "../../src/context/call-context";
import type { OutgoingMessage } from "../../src/core/jsonrpc";
import { createApp } from "../../src/gateway";
import { EVERY_MESSAGE } from "../../src/pipeline/compose";
import { gatewayFetch, initialize, LATEST, post, type GatewayTarget, type Json } from "../helpers/gateway";

/** One thing the recorder saw: a client message, an answer, or a message emitted toward the client. */
type Seen = { what: string; kind: string; principal: string; route: string; version: string; aggregated: boolean };

function recordingApp(): { target: GatewayTarget; seen: Seen[] } {
  const seen: Seen[] = [];
  const recorder: Middleware = (next) =>
    async function recorder(ctx, message) {
      const who = {
        principal: ctx.identity.principal,
        route: ctx.route.name,
        version: ctx.identity.protocolVersion,
        aggregated: ctx.route.kind === "aggregated",
      };
      const label =
        message.kind === "listen" || message.kind === "end"
          ? message.kind
          : ((message.wire.message as { method?: string }).method ?? "response");
      seen.push({ what: `in ${label}`, kind: message.kind, ...who });
      const emit = (text: OutgoingMessage) => {
        const out = (typeof text === "string" ? JSON.parse(text) : { method: text.method }) as Json;
        seen.push({ what: `emitted ${out.method ?? "response"}`, kind: message.kind, ...who });
        return ctx.emit(text);
      };
      const answer = await next({ ...ctx, emit }, message);
      if (answer !== undefined) seen.push({ what: `answer ${label}`, kind: message.kind, ...who });
      return answer;
    };
  const app = createApp({ arrange: (list) => [{ name: "recorder", handles: EVERY_MESSAGE, wrap: recorder }, ...list] });
  return { target: app as unknown as GatewayTarget, seen };
}

describe.each([
  ["/mcp", "", "alpha___"],
  ["/mcp/alpha", "alpha", ""],
])("every message on %s passes through the pipeline", (path, route, prefix) => {
  it("with the identity and route filled", async () => {
    const { target, seen } = recordingApp();
    const { session } = await initialize(path, { capabilities: { sampling: {} }, target });

    // A call that sends progress and log notifications before its result.
    const counted = await post(
      path,
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: `${prefix}count`, arguments: { steps: 2 }, _meta: { progressToken: "p" } },
      },
      { session, target },
    );
    for await (const _ of readSse(counted.body!));

    // A call during which the upstream asks the client (a server request), answered by a separate POST.
    const asked = await post(
      path,
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: `${prefix}ask_llm`, arguments: { question: "2+2?" } },
      },
      { session, target },
    );
    const events = readSse(asked.body!);
    const sampling = JSON.parse((await events.next()).value!.data) as Json;
    const answer = { role: "assistant", content: { type: "text", text: "four" }, model: "m" };
    expect((await post(path, { jsonrpc: "2.0", id: sampling.id, result: answer }, { session, target })).status).toBe(
      202,
    );
    for await (const _ of events);

    // The GET stream: an event the upstream sends outside any request.
    const stream = await gatewayFetch(
      path,
      { headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": LATEST } },
      {},
      target,
    );
    expect(stream.status).toBe(200);
    const pushed = readSse(stream.body!);
    await post(
      path,
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: `${prefix}touch`, arguments: {} } },
      { session, target },
    );
    let event: Json;
    do event = JSON.parse((await pushed.next()).value!.data);
    while (event.method !== "notifications/tools/list_changed");
    await pushed.return(undefined);

    // DELETE ends the session: a message of its own through the pipeline.
    const ended = await gatewayFetch(
      path,
      { method: "DELETE", headers: { "mcp-session-id": session, "mcp-protocol-version": LATEST } },
      {},
      target,
    );
    expect(ended.status).toBe(200);

    const whats = seen.map((s) => `${s.kind}: ${s.what}`);
    expect(whats).toEqual(
      expect.arrayContaining([
        "request: in initialize",
        "request: answer initialize",
        "notification: in notifications/initialized",
        "request: in tools/call",
        "request: emitted notifications/progress",
        "request: emitted notifications/message",
        "request: answer tools/call",
        "request: emitted sampling/createMessage",
        "response: in response",
        "listen: in listen",
        "listen: emitted notifications/tools/list_changed",
        "end: in end",
      ]),
    );
    for (const entry of seen)
      expect(entry).toMatchObject({ principal: "anonymous", route, version: LATEST, aggregated: route === "" });
  });
});

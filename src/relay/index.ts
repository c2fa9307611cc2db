/**
 * The relay: the innermost handler of the pipeline, where every kind of client message
 * meets the upstreams. Requests are routed (relay.ts), initialize opens the upstream
 * sessions (initialize.ts), server/discover describes the route (discover.ts), the client's answers go back to the upstream that asked
 * (client-response.ts), notifications to every upstream of the route, and a listening
 * client gets the upstreams' own streams (listen.ts), a client that ends its session has
 * the upstreams' sessions closed (end-sessions.ts); a 2026-07-28 client's
 * `subscriptions/listen` gets the notifications it opted in to (subscriptions.ts).
 */
import type { Handler } from "../context/call-context";
import { Answer } from "../context/answer";
import { relayClientResponse } from "./client-response";
import { describeRoute } from "./discover";
import { endUpstreamSessions } from "./end-sessions";
import { initializeUpstreams } from "./initialize";
import { listen } from "./listen";
import { relayNotification, requestRelay, type AroundUpstream } from "./relay";
import type { RelayTasks } from "./plugs";
import { subscriptionsListen } from "./subscriptions";

export type { AroundUpstream, RelayTasks };

/**
 * The relay handler at the centre of the pipeline; `around` runs around each request's work
 * at the upstreams (initialize, server/discover and every relayed request), as sign-in does;
 * `tasks` maps task ids between the caller's form and the upstreams' (features/tasks/).
 *
 * @example
 * const relay = createRelay(askToSignIn, relayTasks);
 */
export function createRelay(around: AroundUpstream, tasks: RelayTasks): Handler {
  const relayRequest = requestRelay(around, tasks);
  return async function relay(ctx, message) {
    switch (message.kind) {
      case "request":
        switch (message.wire.message.method) {
          case "initialize":
            return around(ctx, message.wire, async () => Answer.ofText(await initializeUpstreams(ctx, message.wire)));
          case "server/discover":
            return around(ctx, message.wire, async () => Answer.ofText(await describeRoute(ctx, message.wire)));
          case "subscriptions/listen":
            // Older revisions have no such method: their clients' requests go to the upstreams as any other.
            if (ctx.identity.era === "modern") return Answer.ofText(await subscriptionsListen(ctx, message.wire));
            return relayRequest(ctx, message.wire);
          default:
            return relayRequest(ctx, message.wire);
        }
      case "response":
        await relayClientResponse(ctx, message.wire, tasks);
        return undefined;
      case "notification":
        // The gateway initialized each upstream itself, and told it so. Delivery goes on after
        // the pipeline returns: the front answers 202 once every layer accepted the notification.
        if (message.wire.message.method !== "notifications/initialized") {
          ctx.waitUntil(
            relayNotification(ctx, message.wire.text).catch((error: unknown) =>
              console.error("mcp-edge-gateway: relaying a notification failed", error),
            ),
          );
        }
        return undefined;
      case "listen":
        await listen(ctx, tasks);
        return undefined;
      case "end":
        await endUpstreamSessions(ctx);
        return undefined;
      default: {
        const never: never = message;
        return never;
      }
    }
  };
}

/**
 * A list request answered from the list cache (upstream/list-cache.ts) when it holds the
 * answer, else forwarded and, where the upstream's hints or the operator allow, held.
 *
 * The key names everything the upstream's answer may depend on: the upstream and its
 * configuration, the method and its parameters (cursor included, `_meta` not), the
 * revision the client speaks (a 2025 client gets a 2026-07-28 list trimmed) and the
 * capabilities declared for it (servers list tools by what the client can do). A private
 * answer's key names the principal too, with its roles and persona (identity assertions
 * tell the upstream all three).
 */
import type { JsonObject, JsonRpcId } from "../core/jsonrpc";
import { canonicalJson } from "../core/canonical-json";
import { bytesToBase64Url } from "../core/base64url";
import type { CallContext } from "../context/call-context";
import { Answer } from "../context/answer";
import type { UpstreamConfig } from "../config/upstreams";
import {
  CACHED_LIST_METHODS,
  heldList,
  holdList,
  holdOf,
  listGeneration,
  mayBeHeld,
  noteHold,
  type ListKeys,
} from "../upstream/list-cache";
import { forward } from "./forward";
import type { RelayTasks } from "./plugs";
import { withMessageId } from "../core/raw-json";
import { listsEntries, withoutAmbiguousEntries } from "./ambiguous-entries";

async function digest(text: string): Promise<string> {
  return bytesToBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

async function listKeys(
  ctx: CallContext,
  upstream: UpstreamConfig,
  method: string,
  params: JsonObject | undefined,
): Promise<ListKeys> {
  const { _meta: _ignored, ...asked } = params ?? {};
  const { identity, upstreamClient } = ctx;
  const answerDependsOn = canonicalJson([
    upstream,
    method,
    asked,
    identity.protocolVersion,
    identity.clientCapabilities,
    upstreamClient.protocolVersion,
    upstreamClient.clientCapabilities,
  ]);
  const [shared, own] = await Promise.all([
    digest(answerDependsOn),
    digest(`${answerDependsOn}\n${canonicalJson([identity.principal, identity.roles, ctx.record.persona ?? null])}`),
  ]);
  return { upstream: upstream.name, method, shared, own };
}

/**
 * Sends the list request `text` (`method` with `params`, answering `id`) to `upstream`, or
 * answers it with the held copy of the upstream's answer (with `id`, every other byte as
 * the upstream sent it). Other methods are forwarded as they are.
 *
 * @example
 * const answer = await forwardList(ctx, upstream, "tools/list", request.message.params, request.text, request.message.id, tasks);
 */
export async function forwardList(
  ctx: CallContext,
  upstream: UpstreamConfig,
  method: string,
  params: JsonObject | undefined,
  text: string,
  id: JsonRpcId,
  tasks: RelayTasks,
): Promise<Answer> {
  // Held or not, the answer given on has no entry that clients and the gateway would read differently.
  const given = await answerOf(ctx, upstream, method, params, text, id, tasks);
  // Only a list's answer has entries: any other passes on unread.
  if (!listsEntries(method)) return given;
  const { text: answer, dropped } = withoutAmbiguousEntries(upstream.name, method, given.text);
  if (dropped.length > 0) {
    ctx.record.ambiguousEntries ??= [];
    ctx.record.ambiguousEntries.push(...dropped);
  }
  return given.withText(answer);
}

async function answerOf(
  ctx: CallContext,
  upstream: UpstreamConfig,
  method: string,
  params: JsonObject | undefined,
  text: string,
  id: JsonRpcId,
  tasks: RelayTasks,
): Promise<Answer> {
  if (!CACHED_LIST_METHODS.has(method) || upstream.listCache?.ttlMs === 0)
    return forward(ctx, upstream, text, id, tasks);
  // An upstream whose last such list could not be held is asked straight away; its answer says whether this one can.
  const keys = mayBeHeld(upstream.name, method) ? await listKeys(ctx, upstream, method, params) : undefined;
  const held = keys && (await heldList(keys));
  if (held !== undefined) {
    ctx.record.upstream = upstream.name;
    return Answer.ofText(withMessageId(held, id), { upstream: upstream.name });
  }
  const generation = listGeneration(upstream.name, method);
  const forwarded = await forward(ctx, upstream, text, id, tasks);
  const answer = forwarded.text;
  const hold = holdOf(answer, upstream.listCache);
  if (!keys && !hold) noteHold(upstream.name, method, hold);
  else
    holdList(keys ?? (await listKeys(ctx, upstream, method, params)), hold, answer, generation, (work) =>
      ctx.waitUntil(work),
    );
  return forwarded;
}

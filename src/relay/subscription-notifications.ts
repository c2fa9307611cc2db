/**
 * The notification filter of `subscriptions/listen` (2026-07-28, basic/patterns/subscriptions):
 * read from the request within bounds, matched against what an upstream sends, and the
 * subscription id stamped on every message the listener gets. The server MUST NOT send
 * a notification type the client did not ask for, so everything else is dropped here.
 */
import { GatewayError } from "../core/errors";
import {
  INVALID_PARAMS,
  isObject,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcRequest,
  type WireMessage,
} from "../core/jsonrpc";
import { appendMemberSplice, member, rootSpan, splice, type Span } from "../core/raw-json";
import { META_KEYS } from "../core/revisions";

/** The `_meta` key naming the subscription a message belongs to. */
export const SUBSCRIPTION_ID_META_KEY = META_KEYS.subscriptionId;
/** Resource URIs one listen may subscribe to (each costs a subscribe and an unsubscribe per upstream). */
export const MAX_LISTEN_URIS = 32;
/** The longest resource URI a listen may name, in UTF-16 code units. */
export const MAX_LISTEN_URI_CHARS = 2_048;

/** What a listener asked for, or what the gateway agreed to honour (SubscriptionFilter of the schema). */
export type SubscriptionFilter = {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  readonly resourceSubscriptions?: readonly string[];
};

const LIST_CHANGED: ReadonlyMap<string, "toolsListChanged" | "promptsListChanged" | "resourcesListChanged"> = new Map([
  ["notifications/tools/list_changed", "toolsListChanged"],
  ["notifications/prompts/list_changed", "promptsListChanged"],
  ["notifications/resources/list_changed", "resourcesListChanged"],
]);
const RESOURCE_UPDATED = "notifications/resources/updated";

/**
 * The filter of a `subscriptions/listen` request; -32602 when it is missing, mistyped
 * or names more URIs than a listen may hold.
 *
 * @example
 * readFilter(request); // { toolsListChanged: true, resourceSubscriptions: ["file:///a"] }
 */
export function readFilter(request: JsonRpcRequest): SubscriptionFilter {
  const invalid = (detail: string) =>
    new GatewayError(200, INVALID_PARAMS, `Invalid params: ${detail}`, undefined, request.id);
  const notifications = request.params?.["notifications"];
  if (!isObject(notifications)) throw invalid("params.notifications (an object) is required");
  const filter: { -readonly [K in keyof SubscriptionFilter]: SubscriptionFilter[K] } = {};
  for (const key of ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const) {
    const value = notifications[key];
    if (value === undefined) continue;
    if (typeof value !== "boolean") throw invalid(`notifications.${key} must be a boolean`);
    if (value) filter[key] = true;
  }
  const uris = notifications["resourceSubscriptions"];
  if (uris !== undefined) {
    if (!Array.isArray(uris) || !uris.every((uri): uri is string => typeof uri === "string"))
      throw invalid("notifications.resourceSubscriptions must be an array of strings");
    if (uris.length > MAX_LISTEN_URIS)
      throw invalid(
        `notifications.resourceSubscriptions names ${uris.length} URIs; a listen may name at most ${MAX_LISTEN_URIS}`,
      );
    if (uris.some((uri) => uri.length === 0 || uri.length > MAX_LISTEN_URI_CHARS))
      throw invalid(`each resource URI must have 1 to ${MAX_LISTEN_URI_CHARS} characters`);
    const unique = [...new Set(uris)];
    if (unique.length > 0) filter.resourceSubscriptions = unique;
  }
  return filter;
}

/**
 * True when `filter` asks for nothing at all.
 *
 * @example
 * isEmptyFilter({ resourceSubscriptions: [] }); // true
 */
export function isEmptyFilter(filter: SubscriptionFilter): boolean {
  return (
    !filter.toolsListChanged &&
    !filter.promptsListChanged &&
    !filter.resourcesListChanged &&
    (filter.resourceSubscriptions?.length ?? 0) === 0
  );
}

/**
 * The union of what several upstreams agreed to, as the acknowledgement reports it.
 *
 * @example
 * unionOf([{ toolsListChanged: true }, { resourceSubscriptions: ["a://x"] }]); // { toolsListChanged: true, resourceSubscriptions: ["a://x"] }
 */
export function unionOf(filters: readonly SubscriptionFilter[]): SubscriptionFilter {
  const out: { -readonly [K in keyof SubscriptionFilter]: SubscriptionFilter[K] } = {};
  for (const key of ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const)
    if (filters.some((f) => f[key])) out[key] = true;
  const uris = [...new Set(filters.flatMap((f) => f.resourceSubscriptions ?? []))];
  if (uris.length > 0) out.resourceSubscriptions = uris;
  return out;
}

/** True when `uri` is `subscribed` or one of its sub-resources (2025-11-25: an update "might be a sub-resource"). */
function coversUri(subscribed: string, uri: string): boolean {
  return uri === subscribed || uri.startsWith(subscribed.endsWith("/") ? subscribed : `${subscribed}/`);
}

/**
 * True when `agreed` lets `wire` (from an upstream) reach the listener: a list_changed of
 * a list asked for, or an update of a subscribed URI. Requests, responses, progress, log
 * messages and every other notification are not the listener's.
 *
 * @example
 * admits({ toolsListChanged: true }, wire); // true for notifications/tools/list_changed
 */
export function admits(agreed: SubscriptionFilter, wire: WireMessage): boolean {
  const message = wire.message;
  if (!("method" in message) || "id" in message) return false;
  const listed = LIST_CHANGED.get(message.method);
  if (listed) return agreed[listed] === true;
  if (message.method !== RESOURCE_UPDATED) return false;
  const uri = message.params?.["uri"];
  return (
    typeof uri === "string" && (agreed.resourceSubscriptions ?? []).some((subscribed) => coversUri(subscribed, uri))
  );
}

function objectAt(text: string, span: Span | undefined): Span | undefined {
  return span && text.charCodeAt(span.start) === 0x7b ? span : undefined;
}

/**
 * The notification text with `_meta["io.modelcontextprotocol/subscriptionId"]` set to
 * `id` (replacing any the upstream put there), every other byte kept.
 *
 * @example
 * withSubscriptionId('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}', 7);
 * // '{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}'
 */
export function withSubscriptionId(text: string, id: JsonRpcId): string {
  const root = rootSpan(text);
  const raw = JSON.stringify(id);
  const stamp = `{${JSON.stringify(SUBSCRIPTION_ID_META_KEY)}:${raw}}`;
  const paramsSpan = member(text, root, "params");
  const params = objectAt(text, paramsSpan);
  if (!params)
    return splice(text, [
      paramsSpan
        ? { span: paramsSpan, raw: `{"_meta":${stamp}}` }
        : appendMemberSplice(text, root, "params", `{"_meta":${stamp}}`),
    ]);
  const metaSpan = member(text, params, "_meta");
  const meta = objectAt(text, metaSpan);
  if (!meta)
    return splice(text, [metaSpan ? { span: metaSpan, raw: stamp } : appendMemberSplice(text, params, "_meta", stamp)]);
  const existing = member(text, meta, SUBSCRIPTION_ID_META_KEY);
  return splice(text, [
    existing ? { span: existing, raw } : appendMemberSplice(text, meta, SUBSCRIPTION_ID_META_KEY, raw),
  ]);
}

/**
 * The acknowledgement that opens every listen stream: what the gateway agreed to honour,
 * and (gateway `_meta`) the upstreams it could not listen to and why.
 *
 * @example
 * acknowledgement("listen:0", { toolsListChanged: true });
 */
export function acknowledgement(id: JsonRpcId, agreed: SubscriptionFilter, meta: JsonObject = {}): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: { _meta: { ...meta, [SUBSCRIPTION_ID_META_KEY]: id }, notifications: agreed },
  });
}

/**
 * How a request is spoken to a 2026-07-28 upstream: the `_meta` envelope in its params
 * (protocol version, the client's capabilities as bridged, client info) and the headers
 * mirroring the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`,
 * basic/transports/streamable-http "Request Metadata"). No session, no handshake.
 * Every byte of the request other than the envelope stays as the client wrote it.
 */
import { isObject, type JsonObject } from "../core/jsonrpc";
import { appendMemberSplice, member, parseSpan, rootSpan, splice } from "../core/raw-json";
import { META_KEYS, STATELESS_REVISION } from "../core/revisions";
import { methodFacts } from "../core/methods";

/** The revision the gateway speaks to modern upstreams. */
export const MODERN_UPSTREAM_VERSION = STATELESS_REVISION;
export const ENVELOPE_VERSION_KEY = META_KEYS.protocolVersion;
export const ENVELOPE_CAPABILITIES_KEY = META_KEYS.clientCapabilities;
export const ENVELOPE_CLIENT_INFO_KEY = META_KEYS.clientInfo;

const BASE64_PREFIX = "=?base64?";
const BASE64_SUFFIX = "?=";
/** Visible ASCII and inner spaces: what a header may carry as is. */
const PLAIN_HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * A value as a mirrored header carries it: as is when plain ASCII, else (or when it looks
 * like the sentinel itself) `=?base64?<Base64 of its UTF-8>?=`.
 *
 * @example
 * encodeHeaderValue("Hello, 世界"); // "=?base64?SGVsbG8sIOS4lueVjA==?="
 */
export function encodeHeaderValue(value: string): string {
  const sentinel = value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX);
  if (PLAIN_HEADER_VALUE.test(value) && !sentinel) return value;
  const bytes = new TextEncoder().encode(value);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `${BASE64_PREFIX}${btoa(binary)}${BASE64_SUFFIX}`;
}

export const ENVELOPE_LOG_LEVEL_KEY = META_KEYS.logLevel;

/** What the envelope says about the client on whose behalf the gateway asks (and the log level it wants, if any). */
export type EnvelopeClient = {
  readonly clientCapabilities: JsonObject;
  readonly clientInfo: JsonObject;
  readonly logLevel?: string;
};

/** The reserved keys of the 2026-07-28 request envelope. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  ENVELOPE_VERSION_KEY,
  ENVELOPE_CAPABILITIES_KEY,
  ENVELOPE_CLIENT_INFO_KEY,
  ENVELOPE_LOG_LEVEL_KEY,
]);

/**
 * The request text with the gateway's 2026-07-28 `_meta` envelope, made from `client`:
 * envelope keys already in the request (a 2025 client may write any `_meta`) are
 * replaced, never forwarded; they are added to its `_meta` (made if absent), every other
 * byte untouched.
 *
 * @example
 * withEnvelope('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { clientCapabilities: {}, clientInfo: { name: "c", version: "1" } });
 */
export function withEnvelope(text: string, client: EnvelopeClient): string {
  const root = rootSpan(text);
  const params = member(text, root, "params");
  const envelope = {
    [ENVELOPE_VERSION_KEY]: MODERN_UPSTREAM_VERSION,
    [ENVELOPE_CAPABILITIES_KEY]: client.clientCapabilities,
    [ENVELOPE_CLIENT_INFO_KEY]: client.clientInfo,
    ...(client.logLevel !== undefined ? { [ENVELOPE_LOG_LEVEL_KEY]: client.logLevel } : {}),
  };
  if (!params || text.charCodeAt(params.start) !== 0x7b) {
    const edit = appendMemberSplice(text, root, "params", JSON.stringify({ _meta: envelope }));
    return splice(text, [edit]);
  }
  const meta = member(text, params, "_meta");
  if (!meta || text.charCodeAt(meta.start) !== 0x7b) {
    if (meta) return splice(text, [{ span: meta, raw: JSON.stringify(envelope) }]);
    return splice(text, [appendMemberSplice(text, params, "_meta", JSON.stringify(envelope))]);
  }
  // A 2025 client's own _meta (progressToken, trace context) stays; the envelope replaces its envelope keys.
  const own = parseSpan(text, meta);
  const kept = isObject(own) ? Object.fromEntries(Object.entries(own).filter(([key]) => !ENVELOPE_KEYS.has(key))) : {};
  return splice(text, [{ span: meta, raw: JSON.stringify({ ...kept, ...envelope }) }]);
}

/** A parameter mirrored into a header: `Mcp-Param-<name>` from the argument at `path`. */
export type ParamHeader = { readonly name: string; readonly path: readonly string[] };

/** An HTTP field name (RFC 9110 `token`): what `<name>` in `Mcp-Param-<name>` must be. */
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The parameter types an annotation may sit on (a number may not be, nor a structure). */
const ANNOTATABLE_TYPES: ReadonlySet<unknown> = new Set(["string", "integer", "boolean"]);

type Annotation = ParamHeader & { readonly header: unknown; readonly type: unknown };

function annotations(schema: unknown, path: readonly string[]): Annotation[] {
  if (!isObject(schema) || !isObject(schema["properties"])) return [];
  const found: Annotation[] = [];
  for (const [key, property] of Object.entries(schema["properties"])) {
    if (!isObject(property)) continue;
    const header = property["x-mcp-header"];
    if (header !== undefined)
      found.push({
        name: typeof header === "string" ? header : "",
        path: [...path, key],
        header,
        type: property["type"],
      });
    found.push(...annotations(property, [...path, key]));
  }
  return found;
}

/**
 * What makes a tool's `x-mcp-header` annotations invalid (basic/transports/streamable-http,
 * "Custom Headers from Tool Parameters"): a name that is not an HTTP token, two names equal
 * but for case, an annotated parameter that is not a string, integer or boolean. A client
 * MUST leave such a tool out of its list. Undefined when they are valid (or absent).
 *
 * @example
 * annotationProblem({ type: "object", properties: { r: { type: "string", "x-mcp-header": "Bad Name" } } }); // 'x-mcp-header "Bad Name" is not an HTTP token'
 */
export function annotationProblem(schema: unknown): string | undefined {
  const seen = new Set<string>();
  for (const { header, type, path } of annotations(schema, [])) {
    if (typeof header !== "string" || !HEADER_TOKEN.test(header))
      return `x-mcp-header ${JSON.stringify(header)} is not an HTTP token`;
    if (seen.has(header.toLowerCase())) return `x-mcp-header "${header}" is declared twice`;
    seen.add(header.toLowerCase());
    if (!ANNOTATABLE_TYPES.has(type))
      return `x-mcp-header "${header}" annotates ${path.join(".")}, of type ${JSON.stringify(type)}, not a string, integer or boolean`;
  }
  return undefined;
}

/**
 * The `x-mcp-header` annotations of a tool's input schema: each statically reachable
 * property (a chain of `properties` keys) that names a header. None when they are
 * invalid (`annotationProblem`): such a tool has no headers to mirror.
 *
 * @example
 * paramHeaders({ type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } }); // [{ name: "Region", path: ["region"] }]
 */
export function paramHeaders(schema: unknown): ParamHeader[] {
  if (annotationProblem(schema) !== undefined) return [];
  return annotations(schema, []).map(({ name, path }) => ({ name, path }));
}

function headerOfArgument(value: unknown): string | undefined {
  if (typeof value === "string") return encodeHeaderValue(value);
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/**
 * The headers mirroring a request's body: `Mcp-Method`, `Mcp-Name` where the method has
 * one, and `Mcp-Param-*` for the tool's annotated arguments (`annotated`, from its
 * schema) or, when the client sent its own, those (`clientParams`).
 *
 * @example
 * mirroredHeaders("prompts/get", { name: "greet", arguments: {} });
 * // { "mcp-protocol-version": STATELESS_REVISION, "mcp-method": "prompts/get", "mcp-name": "greet" }
 */
export function mirroredHeaders(
  method: string,
  params: JsonObject | undefined,
  annotated: readonly ParamHeader[] = [],
  clientParams: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const headers: Record<string, string> = { "mcp-protocol-version": MODERN_UPSTREAM_VERSION, "mcp-method": method };
  // The member mirrored (core/methods.ts: the transport's rows, and the tasks extension's, as SDK v2 servers check them).
  const source = methodFacts(method).mirroredName;
  const named = source ? params?.[source] : undefined;
  if (typeof named === "string") headers["mcp-name"] = encodeHeaderValue(named);
  if (Object.keys(clientParams).length > 0) return { ...headers, ...clientParams };
  const args = params?.["arguments"];
  for (const { name, path } of annotated) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) ? value[key] : undefined;
    const header = headerOfArgument(value);
    if (header !== undefined) headers[`mcp-param-${name.toLowerCase()}`] = header;
  }
  return headers;
}

/**
 * The 2026-07-28 revision as the gateway serves it: the versions it speaks to modern
 * clients, the `_meta` keys every request carries, the error codes the revision defines,
 * and the methods it removed. Shared by the classifier, the envelope check and the endpoint.
 */
import { LATEST_SESSION_REVISION, META_KEYS, SESSION_REVISIONS, STATELESS_REVISION } from "../../core/revisions";
import { methodFacts, methodsWith } from "../../core/methods";

/** Modern (per-request `_meta`) revisions the gateway serves, newest first. */
export const MODERN_PROTOCOL_VERSIONS = [STATELESS_REVISION] as const;
/** Legacy (handshake) revisions, served by front/legacy; listed by `server/discover` too. */
export const LEGACY_PROTOCOL_VERSIONS = SESSION_REVISIONS;
/** Every revision the gateway serves, for `server/discover` and -32022 answers. */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS];
/** What the gateway speaks to a 2025 upstream on a modern client's behalf. */
export const UPSTREAM_PROTOCOL_VERSION = LATEST_SESSION_REVISION;

export const PROTOCOL_VERSION_META_KEY = META_KEYS.protocolVersion;
export const CLIENT_CAPABILITIES_META_KEY = META_KEYS.clientCapabilities;
export const CLIENT_INFO_META_KEY = META_KEYS.clientInfo;
export const LOG_LEVEL_META_KEY = META_KEYS.logLevel;
export const SERVER_INFO_META_KEY = META_KEYS.serverInfo;

/** The HTTP headers mirroring the body (basic/transports/streamable-http, "Request Metadata"). */
export const PROTOCOL_VERSION_HEADER = "mcp-protocol-version";
export const METHOD_HEADER = "mcp-method";
export const NAME_HEADER = "mcp-name";

/** Error codes of the revision (basic/index, "Error Codes"). */
export const HEADER_MISMATCH = -32020;
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/**
 * Methods whose `Mcp-Name` header a client must send, mirroring `params.name` or `params.uri`
 * (core/methods.ts; the transport's own rows: the tasks extension's `taskId` rows are not checked).
 */
export const NAMED_METHODS: ReadonlyMap<string, "name" | "uri"> = new Map(
  methodsWith("mirroredName").flatMap((method) => {
    const source = methodFacts(method).mirroredName;
    return source === "name" || source === "uri" ? [[method, source] as const] : [];
  }),
);

/**
 * Methods of the 2025 revisions that 2026-07-28 removed: a modern request for one is
 * an unknown method (-32601, HTTP 404), with a message saying what replaced it.
 */
export const REMOVED_METHODS: ReadonlyMap<string, string> = new Map([
  [
    "initialize",
    "2026-07-28 has no handshake: send the protocol version and client capabilities in each request's _meta (server/discover tells what the gateway serves); a 2025 client initializes without the modern _meta",
  ],
  ["ping", "removed in 2026-07-28"],
  ["logging/setLevel", "removed in 2026-07-28: set io.modelcontextprotocol/logLevel in the request's _meta"],
  ["resources/subscribe", "removed in 2026-07-28 (replaced by subscriptions/listen)"],
  ["resources/unsubscribe", "removed in 2026-07-28 (replaced by subscriptions/listen)"],
  ["tasks/list", "removed in 2026-07-28 (tasks became an extension)"],
  ["tasks/result", "removed in 2026-07-28 (tasks became an extension)"],
]);

/** Methods of 2026-07-28 this gateway does not serve yet, with why. */
export const UNBRIDGED_METHODS: ReadonlyMap<string, string> = new Map();

/** Results that carry caching hints (server/utilities/caching). */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
]);

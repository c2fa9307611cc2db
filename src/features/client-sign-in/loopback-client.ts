/**
 * Client ID Metadata Documents at `http://` loopback URLs, while the gateway itself runs
 * locally (`npm start`: its origin is on loopback, the signal the console's cookies and
 * live upstreams use too). workers-oauth-provider resolves https client ids only, with no
 * option for http; an http client id reaches it as a registered client, read from its
 * namespace under `client:<id>`. This view of the namespace answers that read from the
 * document itself, fetched and checked afresh at each read: the authorization request, the
 * consent, the code's issue and the token request each see the document as it is then, so
 * a redirect URI dropped from it between authorize and token gets no token (the library
 * checks the token request's redirect URI against the client it reads). Deployed, the view
 * is never used: an http client id is refused (routes.ts) and nothing is fetched.
 */
import { isObject } from "../../core/jsonrpc";
import { readTextUpTo } from "../../core/bounded-text";
import { isLoopback } from "../../upstream/oauth/http-options";

/** The library's own limit for a metadata document. */
export const LOOPBACK_DOCUMENT_MAX_BYTES = 5 * 1024;
/** How long fetching one document may take. */
const LOOPBACK_DOCUMENT_TIMEOUT_MS = 10_000;
const CLIENT_KEY_PREFIX = "client:";
const GRANT_TYPES = new Set(["authorization_code", "refresh_token"]);

/** The client record the library reads (its `ClientInfo`), for a public client. */
export type LoopbackClient = {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: "none";
  grantTypes: string[];
  responseTypes: string[];
};

/** True for an `http://` client id on a loopback host with a path: a metadata document served locally. */
export function isLoopbackClientId(clientId: string): boolean {
  return clientId.startsWith("http://") && isCodeTarget(clientId) && new URL(clientId).pathname.length > 1;
}

/** https, or http on loopback; no userinfo, no fragment: where a code may go, and what a local client id may be. */
function isCodeTarget(value: string): boolean {
  try {
    const url = new URL(value);
    const scheme = url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url));
    return scheme && !url.username && !url.password && !value.includes("#");
  } catch {
    return false;
  }
}

/** The strings of a non-empty list, else undefined. */
const listOf = (value: unknown, absent?: string[]) =>
  value === undefined
    ? absent
    : Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === "string")
      ? (value as string[])
      : undefined;

/** The document checked as the library checks an https one: the record, or the rule it breaks. */
export function clientOfDocument(clientId: string, document: unknown): LoopbackClient | string {
  if (!isObject(document) || document["client_id"] !== clientId) return "client_id must be the document's URL";
  const name = document["client_name"];
  const redirectUris = listOf(document["redirect_uris"]);
  const grantTypes = listOf(document["grant_types"], ["authorization_code"]);
  const responseTypes = listOf(document["response_types"], ["code"]);
  if (typeof name !== "string" || name.trim() === "") return "client_name is required";
  if (!redirectUris?.every(isCodeTarget)) return "redirect_uris: https or loopback http URLs";
  if ("client_secret" in document || (document["token_endpoint_auth_method"] ?? "none") !== "none")
    return "a public client: no secret, token_endpoint_auth_method none";
  if (!grantTypes?.every((type) => GRANT_TYPES.has(type)) || responseTypes?.join() !== "code")
    return "grant types authorization_code, refresh_token; response type code";
  return { clientId, clientName: name, redirectUris, tokenEndpointAuthMethod: "none", grantTypes, responseTypes };
}

/** Fetches and checks the document at `clientId`; throws with the reason it cannot be used. */
export async function fetchLoopbackClient(clientId: string): Promise<LoopbackClient> {
  const response = await fetch(clientId, {
    headers: { accept: "application/json" },
    redirect: "manual",
    signal: AbortSignal.timeout(LOOPBACK_DOCUMENT_TIMEOUT_MS),
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  const text = await readTextUpTo(response.body, LOOPBACK_DOCUMENT_MAX_BYTES);
  if (text === undefined) throw new Error(`over ${LOOPBACK_DOCUMENT_MAX_BYTES} bytes`);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Error("not JSON");
  }
  const client = clientOfDocument(clientId, document);
  if (typeof client === "string") throw new Error(client);
  return client;
}

/**
 * The library's namespace with loopback client ids read from their documents: every other
 * key (and every write) goes to `kv` unchanged. `refuse` turns a document that cannot be
 * used into the library's error for one (CimdFetchError), so the pages and the token
 * endpoint answer it as they answer an https document's.
 *
 * @example
 * const OAUTH_KV = withLoopbackClients(kv, async (id, cause) => new CimdFetchError(id, cause));
 */
export function withLoopbackClients(
  kv: KVNamespace,
  refuse: (clientId: string, cause: unknown) => Promise<Error>,
): KVNamespace {
  const read = async (key: string, options?: unknown): Promise<unknown> => {
    const clientId = key.slice(CLIENT_KEY_PREFIX.length);
    if (!key.startsWith(CLIENT_KEY_PREFIX) || !clientId.startsWith("http://"))
      return (kv.get as (key: string, options?: unknown) => Promise<unknown>)(key, options);
    let client: LoopbackClient;
    try {
      if (!isLoopbackClientId(clientId)) throw new Error("an http client id must be on loopback, with a path");
      client = await fetchLoopbackClient(clientId);
    } catch (error) {
      console.warn(`mcp-edge-gateway: client metadata document ${clientId} refused: ${(error as Error).message}`);
      throw await refuse(clientId, error);
    }
    const type = typeof options === "string" ? options : isObject(options) ? options["type"] : undefined;
    return type === "json" ? client : JSON.stringify(client);
  };
  return new Proxy(kv, {
    get(target, property) {
      if (property === "get") return read;
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

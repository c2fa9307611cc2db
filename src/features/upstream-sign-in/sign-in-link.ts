/**
 * The link a user is sent to sign in to an upstream: `/oauth/upstream/<name>/start?link=…`,
 * where the link is sealed by the gateway (AES-GCM, core/sealed-state.ts) and carries who
 * it was made for (principal, roles), the upstream, what its challenge said (scope,
 * metadata URL) and a nonce KV marks open until the link is used once or expires.
 * Whoever opens it signs in for that principal, so it goes only to that principal's client.
 */
import { randomHexId } from "../../core/ids";
import { isObject } from "../../core/jsonrpc";
import { openState, sealState } from "../../core/sealed-state";
import { fail, ok, type Result } from "../../core/errors";
import { openFlow, takeFlow } from "../../storage/upstream-tokens";
import type { Challenge } from "../../upstream/oauth/discovery";

/** How long a sign-in link may wait to be opened. */
export const SIGN_IN_LINK_TTL_MS = 10 * 60_000;
const PURPOSE = "upstream-sign-in-link";
/** The links are not opened for a principal (the browser has no credential of the client): this is their fixed binding. */
const LINK_PRINCIPAL = "(sign-in link)";

/** What a sign-in link carries. */
export type SignInRequest = {
  readonly principal: string;
  readonly roles: readonly string[];
  readonly upstream: string;
  readonly challenge: Challenge;
  /** Unique per link: its single use is marked in KV, and it is the elicitation's id. */
  readonly nonce: string;
};

export type LinkProblem = { reason: "link-invalid" | "link-used" };

/**
 * A fresh sign-in link for `request` (without its nonce), and the nonce (the elicitation id).
 *
 * @example
 * const { url, nonce } = await mintSignInLink(kv, secret, "https://gw.example", { principal: "alice", roles: [], upstream: "linear", challenge: {} });
 */
export async function mintSignInLink(
  kv: KVNamespace,
  secret: string,
  origin: string,
  request: Omit<SignInRequest, "nonce">,
  /** The page the link opens: `start` (OAuth) or `key` (a pasted key: features/user-credentials/). */
  page: "start" | "key" = "start",
): Promise<{ url: string; nonce: string }> {
  const nonce = randomHexId();
  await openFlow(kv, `link/${nonce}`, SIGN_IN_LINK_TTL_MS);
  const link = await sealState(secret, PURPOSE, LINK_PRINCIPAL, SIGN_IN_LINK_TTL_MS, { ...request, nonce });
  return {
    url: `${origin}/oauth/upstream/${encodeURIComponent(request.upstream)}/${page}?link=${encodeURIComponent(link)}`,
    nonce,
  };
}

/** Opens a link for `upstream` without using it (to show whom it signs in). */
export async function readSignInLink(
  secret: string,
  upstream: string,
  link: string | undefined,
): Promise<Result<SignInRequest, LinkProblem>> {
  const opened = await openState(secret, PURPOSE, LINK_PRINCIPAL, link);
  const value = opened.ok ? opened.value : undefined;
  if (
    !isObject(value) ||
    value["upstream"] !== upstream ||
    typeof value["principal"] !== "string" ||
    typeof value["nonce"] !== "string" ||
    !Array.isArray(value["roles"]) ||
    !isObject(value["challenge"])
  ) {
    return fail({ reason: "link-invalid" });
  }
  return ok(value as SignInRequest);
}

/** Opens a link for `upstream` and takes its single use. */
export async function useSignInLink(
  kv: KVNamespace,
  secret: string,
  upstream: string,
  link: string | undefined,
): Promise<Result<SignInRequest, LinkProblem>> {
  const read = await readSignInLink(secret, upstream, link);
  if (!read.ok) return read;
  if (!(await takeFlow(kv, `link/${read.value.nonce}`))) return fail({ reason: "link-used" });
  return read;
}

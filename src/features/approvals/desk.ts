/**
 * The approvers' side: which held calls a principal may decide, one call by id, and a
 * decision. Each held call is its own object (call-approval.ts); to list them, the gate
 * writes an index entry in KV (`approvals/<id>`, metadata: caller and roles) when a call is
 * first held, dropped once it is decided, and expiring with the hold. KV lists are eventually
 * consistent (up to about 60 s between locations), so a new call may show a little late;
 * every listed call is read from its object, which is the truth.
 */
import { isObject } from "../../core/jsonrpc";
import type {
  ApprovalDecision,
  CallApprovalRpc,
  DecisionOutcome,
  HeldCall,
  ObjectNamespace,
} from "../../context/object-rpc";
import { PENDING_APPROVAL_TTL_MS } from "./held-calls";

/** At most this many held calls are listed at once (the oldest first). */
export const MAX_LISTED_APPROVALS = 100;
/**
 * At most this many index entries are read to find them (KV lists them by id, which is a
 * digest: in no useful order), in pages of KV_LIST_PAGE. Past it the oldest of those read are
 * listed, and the answer says the list may be incomplete; a call's link always reaches it.
 */
export const MAX_SCANNED_APPROVALS = 10_000;
/**
 * At most this many held calls are read from their objects per listing, the oldest entries
 * first, MAX_LISTED_APPROVALS at a time, until that many are found pending: entries with no
 * pending call behind them (decided, used or gone, before KV dropped them) are passed over and
 * removed, so they cannot hide newer calls for long.
 */
export const MAX_READ_HELD_CALLS = 500;
const KV_LIST_PAGE = 1_000;
const INDEX_PREFIX = "approvals/";
/** An approval's id: the call's digest, 64 hex digits. */
export const APPROVAL_ID = /^[0-9a-f]{64}$/;

/** How a decision made with the admin token is recorded. */
export const OPERATOR = "(operator)";

/** Who asks: a principal with its roles, or the operator (admin token). */
export type Approver = { readonly principal: string; readonly roles: readonly string[]; readonly operator: boolean };

/** Whether `approver` may see and decide `call` (held by another caller, under a rule naming one of its roles). */
export function mayDecide(approver: Approver, call: { caller: string; roles: readonly string[] }): boolean {
  if (approver.operator) return true;
  return approver.principal !== call.caller && approver.roles.some((role) => call.roles.includes(role));
}

/** KV keeps at most this much metadata per key (bytes of its JSON); larger, the listing reads the object instead. */
export const MAX_INDEX_METADATA_BYTES = 1024;

/** Lists `call` for approvers until it is decided or its hold ends. */
export async function indexHeldCall(kv: KVNamespace | undefined, call: HeldCall): Promise<void> {
  const metadata = { caller: call.caller, roles: call.roles, at: call.requestedAt };
  const fits = new TextEncoder().encode(JSON.stringify(metadata)).length <= MAX_INDEX_METADATA_BYTES;
  await kv?.put(INDEX_PREFIX + call.id, "", {
    expirationTtl: PENDING_APPROVAL_TTL_MS / 1000,
    ...(fits ? { metadata } : {}),
  });
}

/** Whether a listed key may be `approver`'s to decide (without metadata: read its object to know). */
function mayBeListed(approver: Approver, metadata: unknown): boolean {
  if (!isObject(metadata) || typeof metadata["caller"] !== "string" || !Array.isArray(metadata["roles"])) return true;
  return mayDecide(approver, { caller: metadata["caller"], roles: metadata["roles"] as string[] });
}

/** When a listed key's call was held, from its metadata (0 without: listed among the first). */
function heldAt(metadata: unknown): number {
  return isObject(metadata) && typeof metadata["at"] === "number" ? metadata["at"] : 0;
}

/**
 * The held calls `approver` may decide, oldest first: the index is read page by page (up to
 * MAX_SCANNED_APPROVALS entries), entries the approver may not decide are left out by their
 * metadata, and the rest are read from their objects, oldest first, until MAX_LISTED_APPROVALS
 * are found (at most MAX_READ_HELD_CALLS read). An entry whose object holds no pending call
 * is removed from the index (a call held again meanwhile would be missing from lists, not
 * lost: its link reaches it, and its next attempt does not write it again).
 */
export async function listHeldCalls(
  kv: KVNamespace | undefined,
  namespace: ObjectNamespace<CallApprovalRpc>,
  approver: Approver,
): Promise<HeldCall[]> {
  if (!kv) return [];
  const candidates: { id: string; at: number }[] = [];
  let cursor: string | undefined;
  for (let scanned = 0; scanned < MAX_SCANNED_APPROVALS; ) {
    const page = await kv.list({ prefix: INDEX_PREFIX, limit: KV_LIST_PAGE, ...(cursor ? { cursor } : {}) });
    scanned += page.keys.length;
    for (const key of page.keys)
      if (mayBeListed(approver, key.metadata))
        candidates.push({ id: key.name.slice(INDEX_PREFIX.length), at: heldAt(key.metadata) });
    if (page.list_complete) break;
    cursor = page.cursor;
  }
  const oldest = candidates.sort((a, b) => a.at - b.at).slice(0, MAX_READ_HELD_CALLS);
  const listed: HeldCall[] = [];
  const stale: string[] = [];
  for (let read = 0; read < oldest.length && listed.length < MAX_LISTED_APPROVALS; ) {
    const batch = oldest.slice(read, read + MAX_LISTED_APPROVALS - listed.length);
    read += batch.length;
    const calls = await Promise.all(batch.map(({ id }) => namespace.get(namespace.idFromName(id)).read()));
    calls.forEach((call, at) => {
      if (call?.state !== "pending") stale.push(INDEX_PREFIX + batch[at]!.id);
      else if (mayDecide(approver, call)) listed.push(call);
    });
  }
  await Promise.all(stale.map((key) => kv.delete(key)));
  return listed.sort((a, b) => a.requestedAt - b.requestedAt);
}

/** The held call `id` as `approver` may see it: its approvers and its caller; undefined otherwise. */
export async function readHeldCall(
  namespace: ObjectNamespace<CallApprovalRpc>,
  id: string,
  approver: Approver,
): Promise<HeldCall | undefined> {
  if (!APPROVAL_ID.test(id)) return undefined;
  const call = await namespace.get(namespace.idFromName(id)).read();
  return call && (mayDecide(approver, call) || call.caller === approver.principal) ? call : undefined;
}

/** `approver`'s decision on call `id`; a decided call leaves the list. */
export async function decideHeldCall(
  kv: KVNamespace | undefined,
  namespace: ObjectNamespace<CallApprovalRpc>,
  id: string,
  approver: Approver,
  approve: boolean,
): Promise<DecisionOutcome> {
  if (!APPROVAL_ID.test(id)) return { kind: "unknown" };
  const decision: ApprovalDecision = {
    approver: approver.operator ? OPERATOR : approver.principal,
    roles: approver.roles,
    operator: approver.operator,
    approve,
  };
  const outcome = await namespace.get(namespace.idFromName(id)).decide(decision);
  if (outcome.kind === "decided") await kv?.delete(INDEX_PREFIX + id);
  return outcome;
}

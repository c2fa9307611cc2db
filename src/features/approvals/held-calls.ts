/**
 * What a `CallApproval` object does with the one call it holds (call-approval.ts is the
 * thin class; this runs inside it, loaded with the rest of approvals on demand). The call is
 * stored under one key, so every step is atomic in the object: `ask` (each attempt of the
 * call: hold it, or let it run once, or say it was denied or its approval expired), `decide`
 * (an approver's approve or deny), `wait` (a 2025 client's call waiting for the decision).
 *
 * A decided call's outcome is taken by the caller's next attempt, and the object forgets it
 * then: the next identical call asks anew. An undecided call is held for PENDING_APPROVAL_TTL_MS.
 */
import type { ApprovalAsk, ApprovalDecision, DecisionOutcome, HeldCall } from "../../context/object-rpc";

/** How long a held call waits for a decision; the next attempt after that asks anew. */
export const PENDING_APPROVAL_TTL_MS = 60 * 60_000;
/** How long after its last change an object keeps its call (an outcome its caller has not come back for). */
export const HELD_CALL_RETENTION_MS = 48 * 60 * 60_000;
/** The longest one `wait` holds, whatever it is asked (the gate's own bound is shorter). */
export const MAX_DECISION_WAIT_MS = 15 * 60_000;

const CALL_KEY = "call";

/** The object's storage, and the waiters its decisions wake (held in the object's memory). */
export type HeldCallObject = { readonly storage: DurableObjectStorage; readonly wakers: Set<() => void> };

async function store(object: HeldCallObject, call: HeldCall): Promise<void> {
  await object.storage.put(CALL_KEY, call);
  await object.storage.setAlarm(Date.now() + HELD_CALL_RETENTION_MS);
}

/** The held call, unless it waited past PENDING_APPROVAL_TTL_MS undecided. */
async function current(object: HeldCallObject, now: number): Promise<HeldCall | undefined> {
  const call = await object.storage.get<HeldCall>(CALL_KEY);
  if (call?.state === "pending" && now >= call.requestedAt + PENDING_APPROVAL_TTL_MS) return undefined;
  return call;
}

/** One attempt of the call: held (new or already), run (the approval used up), denied or expired (forgotten). */
export async function askCall(
  object: HeldCallObject,
  call: Omit<HeldCall, "state" | "decidedBy" | "decidedAt" | "approvedUntil">,
  now = Date.now(),
): Promise<ApprovalAsk> {
  const held = await current(object, now);
  if (held?.state === "pending") return { kind: "pending", call: held };
  if (held) {
    // A decision is used by the first attempt after it, whatever it was: an approval runs one call.
    await object.storage.delete(CALL_KEY);
    if (held.state === "denied") return { kind: "denied", call: held };
    return { kind: now <= (held.approvedUntil ?? 0) ? "run" : "expired", call: held };
  }
  const fresh: HeldCall = { ...call, requestedAt: now, state: "pending" };
  await store(object, fresh);
  return { kind: "created", call: fresh };
}

/** An approver's decision on the held call. */
export async function decideCall(
  object: HeldCallObject,
  decision: ApprovalDecision,
  now = Date.now(),
): Promise<DecisionOutcome> {
  const held = await current(object, now);
  if (!held) return { kind: "unknown" };
  if (held.state !== "pending") return { kind: "already-decided", call: held };
  if (!decision.operator && decision.approver === held.caller) return { kind: "own-call", call: held };
  if (!decision.operator && !decision.roles.some((role) => held.roles.includes(role)))
    return { kind: "not-an-approver", call: held };
  const decided: HeldCall = {
    ...held,
    state: decision.approve ? "approved" : "denied",
    decidedBy: decision.approver,
    decidedAt: now,
    ...(decision.approve ? { approvedUntil: now + held.holdSeconds * 1000 } : {}),
  };
  await store(object, decided);
  for (const wake of object.wakers) wake();
  object.wakers.clear();
  return { kind: "decided", call: decided };
}

/** The held call (undefined when none, or when it waited past its time undecided). */
export function readCall(object: HeldCallObject): Promise<HeldCall | undefined> {
  return current(object, Date.now());
}

/** The call once decided (or gone), or as it stands when `timeoutMs` (at most MAX_DECISION_WAIT_MS) passed. */
export async function waitForDecision(object: HeldCallObject, timeoutMs: number): Promise<HeldCall | undefined> {
  const deadline = Date.now() + Math.min(timeoutMs, MAX_DECISION_WAIT_MS);
  for (;;) {
    const held = await current(object, Date.now());
    const remaining = deadline - Date.now();
    if (held?.state !== "pending" || remaining <= 0) return held;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, remaining);
      object.wakers.add(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * Approvals' code beyond the Durable Object's class and the routes' mounts, loaded from the
 * module of its own the Worker uploads beside the main module (storage/approvals-library.ts):
 * a gateway whose calls are never held never parses it.
 */
import { loadApprovalsModule } from "../../storage/approvals-library";

/** The module's exports: lazy-entry.ts bundled. */
export type Approvals = typeof import("./lazy-entry");

/** Approvals, loaded on first use in this isolate. */
export async function loadApprovals(): Promise<Approvals> {
  return (await loadApprovalsModule()) as Approvals;
}

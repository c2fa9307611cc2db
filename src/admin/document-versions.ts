/**
 * Opt-in concurrency control for the admin API's KV documents (filter sets, the plan,
 * personas, visibility, icons, overrides, rules): GET answers an `ETag` (a digest of the
 * stored text), a write with `If-Match` is refused with 412 when the document changed
 * since, one with `If-None-Match: *` when the document exists (so creating one never
 * overwrites another's), and a write without either stays unconditional (existing scripts
 * keep working).
 *
 * KV has no compare-and-swap. The check compares against what this location reads (a
 * write is visible at once where it was made, elsewhere within about a minute), and
 * read-check-write of one key is serialised inside this isolate, so two admins whose
 * writes land on the same isolate never lose one. Two writes landing at the same moment on
 * different isolates or locations can both pass; docs/admin-api.md says so.
 */
import type { Context } from "hono";

/** Where a document that is absent still has a representation (the personas collection reads as `{}`). */
export type DocumentShape = {
  /** Whether the target of `If-Match: *` exists in the stored text (default: the document is stored). */
  readonly exists?: (stored: string | null) => boolean | Promise<boolean>;
  /** An absent document still answers GET (with this ETag): its writes answer one after deleting too. */
  readonly absentHasEtag?: boolean;
  /**
   * The part of the stored text a write's preconditions and ETag cover (one entry of a
   * document holding several: a stale write to one is not refused because another changed);
   * null when that part is absent. Default: the whole text.
   */
  readonly version?: (stored: string | null) => Promise<string | null>;
};

/** What a write did: the response, and the document's text now (null: deleted; undefined: nothing written). */
export type Written = { readonly response: Response; readonly stored?: string | null };

const TAG_BYTES = 16;

/** The strong ETag of a document's stored text; an absent document's is that of the empty text. */
export async function etagOf(stored: string | null): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(stored ?? ""));
  const hex = [...new Uint8Array(digest, 0, TAG_BYTES)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `"${hex}"`;
}

/** The entity tags a header lists, weak ones (`W/"…"`) included. */
function tagsIn(header: string): string[] {
  return header.match(/(?:W\/)?"[^"]*"/g) ?? [];
}

/** The entity tags an `If-Match` lists; weak ones never match a strong comparison, so they are dropped. */
function listedTags(header: string): string[] {
  return tagsIn(header).filter((tag) => !tag.startsWith("W/"));
}

/** Whether `If-Match` (RFC 9110 §13.1.1) holds for the stored text; no header always holds. */
async function ifMatchHolds(header: string | null, stored: string | null, shape: DocumentShape): Promise<boolean> {
  if (header === null) return true;
  const exists = shape.exists ?? ((text: string | null) => text !== null);
  if (header.trim() === "*") return await exists(stored);
  if (stored === null && !shape.absentHasEtag) return false;
  return listedTags(header).includes(await etagOf(stored));
}

/** Whether `If-None-Match` (RFC 9110 §13.1.2) holds for the stored text: `*` when nothing exists, tags when none is the current one (weak comparison); no header always holds. */
async function ifNoneMatchHolds(header: string | null, stored: string | null, shape: DocumentShape): Promise<boolean> {
  if (header === null) return true;
  const exists = await (shape.exists ?? ((text: string | null) => text !== null))(stored);
  if (header.trim() === "*") return !exists;
  if (stored === null && !shape.absentHasEtag) return true;
  const current = await etagOf(stored);
  return !tagsIn(header).some((tag) => tag.replace(/^W\//, "") === current);
}

/** Why a write's precondition failed, or undefined when both hold. */
async function failedPrecondition(
  c: Context,
  stored: string | null,
  shape: DocumentShape,
): Promise<string | undefined> {
  const ifMatch = c.req.header("if-match") ?? null;
  if (!(await ifMatchHolds(ifMatch, stored, shape))) {
    const why =
      ifMatch?.trim() === "*"
        ? "If-Match: * needs it to exist, and it does not"
        : stored === null && !shape.absentHasEtag
          ? "nothing is stored"
          : "it changed since you read it";
    return `Precondition Failed: ${why}; nothing was stored. GET it again, apply your change and send its ETag in If-Match`;
  }
  const ifNoneMatch = c.req.header("if-none-match") ?? null;
  if (!(await ifNoneMatchHolds(ifNoneMatch, stored, shape))) {
    const why =
      ifNoneMatch?.trim() === "*"
        ? "If-None-Match: * needs it to be absent, and it exists (someone created it since you looked)"
        : "it is still the version If-None-Match names";
    return `Precondition Failed: ${why}; nothing was stored. GET it, apply your change to what is there and send its ETag in If-Match`;
  }
  return undefined;
}

const keyQueues = new Map<string, Promise<unknown>>();

/** Runs `task` after every earlier task of `key` in this isolate has finished. */
async function serialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  const before = keyQueues.get(key) ?? Promise.resolve();
  const run = before.then(task, task);
  const settled = run.catch(() => undefined);
  keyQueues.set(key, settled);
  try {
    return await run;
  } finally {
    if (keyQueues.get(key) === settled) keyQueues.delete(key);
  }
}

/**
 * Reads KV `key`, checks the request's `If-Match` and `If-None-Match` against it (412 with
 * the current ETag when one fails), then runs `write` with the stored text; the answer carries the new ETag. One
 * key's read-check-write runs one at a time in this isolate.
 *
 * @example
 * return conditionalWrite(c, kv, PLAN_KEY, {}, async () => {
 *   await kv.put(PLAN_KEY, text);
 *   return { response: c.json({ stored }), stored: text };
 * });
 */
export function conditionalWrite(
  c: Context,
  kv: KVNamespace,
  key: string,
  shape: DocumentShape,
  write: (stored: string | null) => Promise<Written>,
): Promise<Response> {
  const versionOf = async (text: string | null) => (shape.version ? shape.version(text) : text);
  return serialised(key, async () => {
    const stored = await kv.get(key);
    const covered = await versionOf(stored);
    const failed = await failedPrecondition(c, covered, shape);
    if (failed !== undefined) {
      const current = await etagHeaders(covered, shape);
      return c.json({ error: failed, ...current }, 412, current);
    }
    const written = await write(stored);
    const now = written.stored === undefined ? undefined : await versionOf(written.stored);
    if (now !== undefined && (now !== null || shape.absentHasEtag))
      written.response.headers.set("etag", await etagOf(now));
    return written.response;
  });
}

/** A GET's headers for the stored text: its ETag (none for an absent document unless it has a representation). */
export async function etagHeaders(stored: string | null, shape: DocumentShape = {}): Promise<Record<string, string>> {
  return stored === null && !shape.absentHasEtag ? {} : { etag: await etagOf(stored) };
}

/**
 * Stores a checked document under `key` (If-Match honoured), drops this isolate's cached
 * copy with `forget`, and answers `{...extra, stored}` with the new ETag.
 */
export function storeDocument(
  c: Context,
  kv: KVNamespace,
  key: string,
  value: unknown,
  forget: (key: string) => void,
  extra: Record<string, string> = {},
): Promise<Response> {
  return conditionalWrite(c, kv, key, {}, async () => {
    const stored = JSON.stringify(value);
    await kv.put(key, stored);
    forget(key);
    return { response: c.json({ ...extra, stored: value }), stored };
  });
}

/** Deletes the document under `key` (If-Match honoured); with `missing`, an absent one is a 404 with that message. */
export function deleteDocument(
  c: Context,
  kv: KVNamespace,
  key: string,
  { label, forget, missing }: { label: string; forget: (key: string) => void; missing?: string },
): Promise<Response> {
  return conditionalWrite(c, kv, key, {}, async (stored) => {
    if (stored === null && missing !== undefined) return { response: c.json({ error: missing }, 404) };
    await kv.delete(key);
    forget(key);
    return { response: c.json({ deleted: label }), stored: null };
  });
}

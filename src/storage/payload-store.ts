/**
 * Oversized payloads in R2: stored under a random 128-bit id with who may read them
 * and until when, read back only by their owner before they expire. The owner is the
 * principal (any session of it may read); with authentication off every caller is the
 * same principal ("anonymous"), so a payload is scoped to the session that caused it.
 *
 * Expiry is checked on every read (an expired payload is "not found" even before the
 * bucket's lifecycle rule deletes it). Access is checked against the metadata; a payload
 * that belongs to someone else is "not found" too, so ids reveal nothing.
 */
import { randomHexId } from "../core/ids";

/** The URI prefix under which MCP clients read stored payloads (resources/read). */
export const PAYLOAD_URI_PREFIX = "mcp-edge-gateway://payloads/";
export const PAYLOAD_KEY_PREFIX = "payloads/";
export const DEFAULT_PAYLOAD_TTL_S = 24 * 60 * 60;
const ID_PATTERN = /^[0-9a-f]{32}$/;

/**
 * Who caused an offload: the only one who may read it back. `session` is "" for a
 * payload of the whole principal, or the session it is scoped to (anonymous callers).
 */
export type PayloadOwner = { readonly principal: string; readonly session: string };

/**
 * Who is reading through MCP: the caller's principal and actual session ("" when its era
 * keeps none), and whether payloads are theirs by principal or by session (used to say why
 * a payload is not found).
 */
export type PayloadCaller = PayloadOwner & { readonly scope: "principal" | "session" };

export type PayloadMetadata = PayloadOwner & {
  readonly upstream: string;
  readonly tool: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly size: number;
  readonly contentType: string;
};

/** A fresh payload id: 32 hex characters from `crypto.getRandomValues`. */
export const newPayloadId = randomHexId;

export function isPayloadId(id: unknown): id is string {
  return typeof id === "string" && ID_PATTERN.test(id);
}

function toCustomMetadata(metadata: PayloadMetadata): Record<string, string> {
  return Object.fromEntries(Object.entries(metadata).map(([key, value]) => [key, String(value)]));
}

/** The size is the stored object's: a streamed payload's was not known when its metadata was written. */
function fromCustomMetadata(custom: Record<string, string> | undefined, size: number): PayloadMetadata | undefined {
  if (!custom?.["principal"] || !custom["expiresAt"]) return undefined;
  return {
    principal: custom["principal"],
    session: custom["session"] ?? "",
    upstream: custom["upstream"] ?? "",
    tool: custom["tool"] ?? "",
    createdAt: custom["createdAt"] ?? "",
    expiresAt: custom["expiresAt"],
    size,
    contentType: custom["contentType"] ?? "application/json",
  };
}

/** Metadata for a payload stored now. */
export function payloadMetadata(
  owner: PayloadOwner,
  fields: { upstream: string; tool: string; size: number; contentType: string; ttlSeconds: number },
  now = Date.now(),
): PayloadMetadata {
  // `size` is informational in R2 (-1 while streaming); reads use the object's own size.
  return {
    principal: owner.principal,
    session: owner.session,
    upstream: fields.upstream,
    tool: fields.tool,
    size: fields.size,
    contentType: fields.contentType,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + fields.ttlSeconds * 1000).toISOString(),
  };
}

/** Stores a payload whose bytes are all at hand. */
export async function putPayload(
  bucket: R2Bucket,
  id: string,
  body: string | Uint8Array,
  metadata: PayloadMetadata,
): Promise<void> {
  await bucket.put(PAYLOAD_KEY_PREFIX + id, body, {
    httpMetadata: { contentType: metadata.contentType },
    customMetadata: toCustomMetadata(metadata),
  });
}

/** Starts a multipart upload for a payload streamed in parts. */
export function startPayloadUpload(
  bucket: R2Bucket,
  id: string,
  metadata: PayloadMetadata,
): Promise<R2MultipartUpload> {
  return bucket.createMultipartUpload(PAYLOAD_KEY_PREFIX + id, {
    httpMetadata: { contentType: metadata.contentType },
    customMetadata: toCustomMetadata(metadata),
  });
}

/** Who is asking: a caller, or a signed URL (which proves access by itself). */
export type PayloadReader = { readonly owner: PayloadCaller } | { readonly signed: true };

export type PayloadLookup =
  | { readonly state: "found"; readonly metadata: PayloadMetadata }
  | { readonly state: "not-found" };

function readable(
  metadata: PayloadMetadata | undefined,
  reader: PayloadReader,
  now: number,
): metadata is PayloadMetadata {
  if (!metadata || Date.parse(metadata.expiresAt) <= now) return false;
  if ("signed" in reader) return true;
  // A payload stored with a session ("" is the whole principal's) is that session's alone.
  const { principal, session } = reader.owner;
  return metadata.principal === principal && (metadata.session === "" || metadata.session === session);
}

/** Why a caller finds no payload `id`: expired, or not theirs (the two are never told apart, so ids reveal nothing). */
export function payloadNotFoundMessage(id: string, caller: PayloadCaller): string {
  const expiry = "it may have expired (see expiresAt in the answer that offloaded it)";
  if (caller.scope === "session") {
    const why = "with authentication off, a payload belongs to the session that caused it";
    return `no payload ${id} for this session: ${expiry} or belong to another session (${why})`;
  }
  return `no payload ${id} for principal ${JSON.stringify(caller.principal)}: ${expiry} or belong to another caller`;
}

/** The payload's metadata, when `reader` may read it. */
export async function findPayload(
  bucket: R2Bucket,
  id: string,
  reader: PayloadReader,
  now = Date.now(),
): Promise<PayloadLookup> {
  if (!isPayloadId(id)) return { state: "not-found" };
  const head = await bucket.head(PAYLOAD_KEY_PREFIX + id);
  const metadata = head ? fromCustomMetadata(head.customMetadata, head.size) : undefined;
  return readable(metadata, reader, now) ? { state: "found", metadata } : { state: "not-found" };
}

/** Reads a payload (or a byte range of it) that `findPayload` allowed. */
export async function readPayload(
  bucket: R2Bucket,
  id: string,
  range?: { offset: number; length: number },
): Promise<R2ObjectBody | null> {
  return bucket.get(PAYLOAD_KEY_PREFIX + id, range ? { range } : undefined);
}

/**
 * Streamable HTTP rules that do not depend on upstreams: which protocol versions the
 * gateway speaks, what the headers must say, and how a version is negotiated.
 */
import { GatewayError } from "../../core/errors";
import { INVALID_REQUEST } from "../../core/jsonrpc";
import { BATCH_REVISION, LATEST_SESSION_REVISION, SESSION_REVISIONS } from "../../core/revisions";

/** Newest first; the first is offered when a client asks for one we do not speak. */
export const SUPPORTED_PROTOCOL_VERSIONS = SESSION_REVISIONS;
export const LATEST_PROTOCOL_VERSION = LATEST_SESSION_REVISION;
/** Versions that still allow JSON-RPC batches (removed in 2025-06-18). */
const BATCH_VERSIONS = new Set<string>([BATCH_REVISION]);

export function isSupportedVersion(version: unknown): version is string {
  return typeof version === "string" && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

/** The version to answer initialize with: the client's when we speak it, else our latest. */
export function negotiateVersion(requested: unknown): string {
  return isSupportedVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

export function allowsBatches(version: string): boolean {
  return BATCH_VERSIONS.has(version);
}

/** 400 for an `MCP-Protocol-Version` header naming a version the gateway does not speak. */
export function checkVersionHeader(header: string | null): void {
  if (header !== null && !isSupportedVersion(header)) {
    throw new GatewayError(
      400,
      INVALID_REQUEST,
      `Bad Request: unsupported MCP-Protocol-Version "${header}" (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
    );
  }
}

function mediaTypes(header: string | null): string[] {
  return (header ?? "").split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
}

/** A POST must accept both JSON and SSE answers, and carry JSON. */
export function checkPostHeaders(accept: string | null, contentType: string | null): void {
  const types = mediaTypes(accept);
  const any = types.includes("*/*");
  if (!any && !(types.includes("application/json") && types.includes("text/event-stream"))) {
    throw new GatewayError(406, INVALID_REQUEST, "Not Acceptable: the Accept header must list both application/json and text/event-stream");
  }
  if (mediaTypes(contentType)[0] !== "application/json") {
    throw new GatewayError(415, INVALID_REQUEST, "Unsupported Media Type: the Content-Type must be application/json");
  }
}

/** The GET stream is SSE only. */
export function checkGetHeaders(accept: string | null): void {
  const types = mediaTypes(accept);
  if (!types.includes("text/event-stream") && !types.includes("*/*")) {
    throw new GatewayError(406, INVALID_REQUEST, "Not Acceptable: the Accept header must list text/event-stream to open the server stream");
  }
}

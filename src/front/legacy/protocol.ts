/**
 * The 2025 revisions' own rules: which of them the gateway speaks, how a version is
 * negotiated, which allow batches, what the MCP-Protocol-Version header may say (the
 * Accept and Content-Type rules both fronts share are in front/http/request-checks.ts).
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

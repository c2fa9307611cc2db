/**
 * Checks of a Streamable HTTP request that every protocol era makes alike: what the
 * Accept and Content-Type headers must say, and a message's structure (no key twice, no
 * nesting past the bound) before anything parses it for policy.
 */
import { GatewayError } from "../../core/errors";
import { INVALID_REQUEST, type JsonRpcId } from "../../core/jsonrpc";
import { structureProblem, structureProblemText } from "../../core/duplicate-keys";

/**
 * Refuses a key twice in any object of a message (or batch), at any depth, and nesting past
 * MAX_MESSAGE_DEPTH: JSON.parse keeps the last of two keys, the relayed bytes hold both,
 * and an upstream may read the first, so policy could judge one tool while another runs.
 */
export function checkDuplicateKeys(text: string, id: JsonRpcId | null = null): void {
  const problem = structureProblem(text);
  if (problem) throw new GatewayError(400, INVALID_REQUEST, structureProblemText(problem), undefined, id);
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

/**
 * Checks of a Streamable HTTP request that every protocol era makes alike: what the
 * Accept and Content-Type headers must say, and a message's structure (no key twice, no
 * nesting past the bound) before anything parses it for policy; and the catalog mode the
 * URL asks for (`?catalog=`).
 */
import { fail, GatewayError, ok, type Result } from "../../core/errors";
import { INVALID_REQUEST, isId, type JsonRpcId } from "../../core/jsonrpc";
import { structureProblem, structureProblemText, type StructureProblem } from "../../core/duplicate-keys";
import { member, parseSpan, rootSpan } from "../../core/raw-json";
import { CATALOG_MODES, isCatalogMode, type CatalogMode } from "../../context/grant";

/** The query parameter of /mcp and /mcp/<upstream> that chooses a catalog mode (context/grant.ts). */
export const CATALOG_PARAM = "catalog";

/**
 * The catalog mode a request URL asks for: undefined when it names none, a tagged failure
 * when it names something else (or names it twice).
 *
 * @example
 * requestedCatalog("https://gw.example/mcp?catalog=search") // { ok: true, value: "search" }
 */
export function requestedCatalog(
  url: string,
): Result<CatalogMode | undefined, { reason: "bad-catalog"; message: string }> {
  // Nearly every request URL has no query: no URL to parse then.
  const values = url.includes("?") ? new URL(url).searchParams.getAll(CATALOG_PARAM) : [];
  if (values.length === 0) return ok(undefined);
  const [value] = values;
  if (values.length > 1 || !isCatalogMode(value)) {
    return fail({
      reason: "bad-catalog",
      message: `Bad request: ?${CATALOG_PARAM}= takes one of ${CATALOG_MODES.join(", ")} (see docs/tool-search.md)`,
    });
  }
  return ok(value);
}

/** A client's message text, its structure read once, before anything parses it. */
export type CheckedBody = { readonly text: string; readonly problem: StructureProblem | undefined };

/**
 * The top-level `id` of a message text not parsed (nor perhaps parseable): null when there
 * is none to read. Only a string or a number is parsed (an id nested deep is what may
 * have been refused), and a number only when it reads back exactly.
 */
function rawMessageId(text: string): JsonRpcId | null {
  try {
    const span = member(text, rootSpan(text), "id");
    const first = span === undefined ? -1 : text.charCodeAt(span.start);
    if (span === undefined || !(first === 0x22 || first === 0x2d || (first >= 0x30 && first <= 0x39))) return null;
    const id = parseSpan(text, span);
    return isId(id) && (typeof id === "string" || Number.isSafeInteger(id) || !Number.isInteger(id)) ? id : null;
  } catch {
    return null;
  }
}

/**
 * Refuses nesting past MAX_MESSAGE_DEPTH before the text is parsed: JSON.parse of 4 MiB of
 * brackets takes about 100 MiB of the isolate's 128 MB, and a check after it came too late.
 * What else the scan found (a key twice) is for `checkDuplicateKeys` once the text parses.
 */
export function checkNesting(text: string): CheckedBody {
  const problem = structureProblem(text);
  if (problem?.reason === "too-deep")
    throw new GatewayError(400, INVALID_REQUEST, structureProblemText(problem), undefined, rawMessageId(text));
  return { text, problem };
}

/**
 * Refuses a key twice in any object of a message (or batch), at any depth: JSON.parse
 * keeps the last of two keys, the relayed bytes hold both, and an upstream may read the
 * first, so policy could judge one tool while another runs.
 */
export function checkDuplicateKeys(body: CheckedBody, id: JsonRpcId | null = null): void {
  if (body.problem) throw new GatewayError(400, INVALID_REQUEST, structureProblemText(body.problem), undefined, id);
}

function mediaTypes(header: string | null): string[] {
  return (header ?? "").split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
}

/** The Accept and Content-Type that MCP clients send (the SDK's): nothing to split then. */
const COMMON_ACCEPT = "application/json, text/event-stream";
const JSON_TYPE = "application/json";

/** A POST must accept both JSON and SSE answers, and carry JSON. */
export function checkPostHeaders(accept: string | null, contentType: string | null): void {
  if (accept === COMMON_ACCEPT && contentType === JSON_TYPE) return;
  const types = mediaTypes(accept);
  const any = types.includes("*/*");
  if (!any && !(types.includes("application/json") && types.includes("text/event-stream"))) {
    throw new GatewayError(
      406,
      INVALID_REQUEST,
      "Not Acceptable: the Accept header must list both application/json and text/event-stream",
    );
  }
  if (mediaTypes(contentType)[0] !== JSON_TYPE) {
    throw new GatewayError(415, INVALID_REQUEST, "Unsupported Media Type: the Content-Type must be application/json");
  }
}

/** The GET stream is SSE only. */
export function checkGetHeaders(accept: string | null): void {
  const types = mediaTypes(accept);
  if (!types.includes("text/event-stream") && !types.includes("*/*")) {
    throw new GatewayError(
      406,
      INVALID_REQUEST,
      "Not Acceptable: the Accept header must list text/event-stream to open the server stream",
    );
  }
}

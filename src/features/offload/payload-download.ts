/**
 * `GET /payloads/<id>?token=...`: an offloaded payload over plain HTTP, for whatever
 * does not speak MCP. The signed, expiring token is the only credential; single byte
 * ranges (`Range: bytes=a-b`, `a-`, `-n`) are served from R2.
 */
import { GatewayError } from "../../core/errors";
import { sessionSecret } from "../../config/secrets";
import { findPayload, readPayload } from "../../storage/payload-store";
import { verifyPayloadToken } from "../../storage/signed-url";

const NOT_FOUND = "Not Found: no such payload, or the link expired";

/** The byte range a `Range` header asks of an object of `size` bytes: undefined for none, "unsatisfiable" for one that cannot be served. */
function byteRange(
  header: string | null,
  size: number,
): { offset: number; length: number } | "unsatisfiable" | undefined {
  const match = header === null ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined; // no Range, or a form not served (several ranges): the whole payload
  const [, from, to] = match;
  if (from === "" && to === "") return "unsatisfiable";
  if (from === "") {
    const length = Math.min(Number(to), size);
    return length > 0 ? { offset: size - length, length } : "unsatisfiable";
  }
  const offset = Number(from);
  const last = to === "" ? size - 1 : Math.min(Number(to), size - 1);
  return offset < size && last >= offset ? { offset, length: last - offset + 1 } : "unsatisfiable";
}

/** Streams the payload named in the URL when the token is valid. */
export async function downloadPayload(
  request: Request,
  env: Readonly<Record<string, unknown>>,
  id: string,
): Promise<Response> {
  const bucket = env["PAYLOADS"] as R2Bucket | undefined;
  const token = new URL(request.url).searchParams.get("token") ?? "";
  if (!bucket || !(await verifyPayloadToken(id, token, sessionSecret(env))))
    throw new GatewayError(404, -32000, NOT_FOUND);
  const found = await findPayload(bucket, id, { signed: true });
  if (found.state !== "found") throw new GatewayError(404, -32000, NOT_FOUND);
  const { size, contentType } = found.metadata;
  const range = byteRange(request.headers.get("range"), size);
  const headers = new Headers({
    "content-type": contentType,
    "cache-control": "private, no-store",
    "x-content-type-options": "nosniff",
    "content-disposition": `attachment; filename="payload-${id}${contentType.startsWith("application/json") ? ".json" : ".txt"}"`,
    "accept-ranges": "bytes",
  });
  if (range === "unsatisfiable") {
    headers.set("content-range", `bytes */${size}`);
    return new Response(null, { status: 416, headers });
  }
  const object = await readPayload(bucket, id, range);
  if (!object) throw new GatewayError(404, -32000, NOT_FOUND);
  if (!range) return new Response(object.body, { headers });
  headers.set("content-range", `bytes ${range.offset}-${range.offset + range.length - 1}/${size}`);
  return new Response(object.body, { status: 206, headers });
}

/**
 * `GET /payloads/<id>?token=...`: an offloaded payload over plain HTTP, for whatever
 * does not speak MCP. The signed, expiring token is the only credential; Range
 * requests are passed to R2.
 */
import { GatewayError } from "../core/errors";
import { sessionSecret } from "../core/session";
import { findPayload, PAYLOAD_KEY_PREFIX } from "../storage/payload-store";
import { verifyPayloadToken } from "../storage/signed-url";

const NOT_FOUND = "Not Found: no such payload, or the link expired";

/** Streams the payload named in the URL when the token is valid. */
export async function downloadPayload(request: Request, env: Readonly<Record<string, unknown>>, id: string): Promise<Response> {
  const bucket = env["PAYLOADS"] as R2Bucket | undefined;
  const token = new URL(request.url).searchParams.get("token") ?? "";
  if (!bucket || !(await verifyPayloadToken(id, token, sessionSecret(env)))) throw new GatewayError(404, -32000, NOT_FOUND);
  const found = await findPayload(bucket, id, { signed: true });
  if (found.state !== "found") throw new GatewayError(404, -32000, NOT_FOUND);
  const object = await bucket.get(PAYLOAD_KEY_PREFIX + id, { range: request.headers });
  if (!object) throw new GatewayError(404, -32000, NOT_FOUND);
  const headers = new Headers({ "content-type": found.metadata.contentType, "cache-control": "private, no-store", etag: object.httpEtag });
  const range = object.range as { offset?: number; length?: number } | undefined;
  if (range && request.headers.has("range")) {
    const start = range.offset ?? 0;
    const length = range.length ?? object.size - start;
    headers.set("content-range", `bytes ${start}-${start + length - 1}/${object.size}`);
    return new Response(object.body, { status: 206, headers });
  }
  return new Response(object.body, { headers });
}

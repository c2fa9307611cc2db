/**
 * `GET /icons/<name>`: an icon file the gateway serves itself (features/shaping/icon-files.ts),
 * public like any icon a client shows, with its content type, a strong validator and
 * caching headers. SVG is an active format, so it is sent with a content security policy
 * that runs no script, and nothing is sniffed.
 */
import { GatewayError } from "../../core/errors";
import { getIconFile, ICON_FILE_NAME } from "./icon-files";

/** Browsers and clients may keep an icon a day, and use a stale one while they check it again. */
const ICON_CACHE_CONTROL = "public, max-age=86400, stale-while-revalidate=604800";

/** Answers a request for icon `name`. */
export async function downloadIcon(
  request: Request,
  env: Readonly<Record<string, unknown>>,
  name: string,
): Promise<Response> {
  const bucket = env["PAYLOADS"] as R2Bucket | undefined;
  const object = bucket && ICON_FILE_NAME.test(name) ? await getIconFile(bucket, name) : null;
  if (!object) throw new GatewayError(404, -32000, `Not Found: no icon file named "${name}"`);
  const headers = new Headers({
    "content-type": object.httpMetadata?.contentType ?? "application/octet-stream",
    "cache-control": ICON_CACHE_CONTROL,
    etag: object.httpEtag,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  });
  const match = request.headers.get("if-none-match");
  if (match?.split(",").some((tag) => tag.trim() === object.httpEtag || tag.trim() === "*")) {
    await object.body.cancel();
    return new Response(null, { status: 304, headers });
  }
  headers.set("content-length", String(object.size));
  return new Response(object.body, { headers });
}

/**
 * Icon files the gateway serves itself (`GET /icons/<name>`), kept in R2 under `icons/`
 * beside the payloads. Serving icons from the gateway's own origin follows the spec's
 * advice that clients fetch icons from the server's origin, and spares clients a third
 * party. Only image types are stored, each with its content type.
 */

export const ICON_KEY_PREFIX = "icons/";
/** An icon file's name: what follows /icons/ in its URL. */
export const ICON_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const MAX_ICON_BYTES = 1024 * 1024;
/** The image types an icon may have (the spec names PNG, JPEG, SVG and WebP; GIF and ICO are common too). */
export const ICON_TYPES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/svg+xml",
  "image/webp",
  "image/gif",
  "image/x-icon",
  "image/vnd.microsoft.icon",
]);

/** The image type of a Content-Type header (parameters dropped), or undefined when it is not one icons may have. */
export function iconType(header: string | null): string | undefined {
  const type = (header ?? "").split(";")[0]!.trim().toLowerCase();
  return ICON_TYPES.has(type) ? type : undefined;
}

/**
 * Stores an icon file.
 *
 * @example
 * await putIconFile(env.PAYLOADS, "logo.png", bytes, "image/png");
 */
export async function putIconFile(
  bucket: R2Bucket,
  name: string,
  body: ArrayBuffer,
  contentType: string,
): Promise<{ etag: string }> {
  const stored = await bucket.put(ICON_KEY_PREFIX + name, body, { httpMetadata: { contentType } });
  return { etag: stored.httpEtag };
}

/** An icon file, or null. */
export function getIconFile(bucket: R2Bucket, name: string): Promise<R2ObjectBody | null> {
  return bucket.get(ICON_KEY_PREFIX + name);
}

export async function deleteIconFile(bucket: R2Bucket, name: string): Promise<boolean> {
  if (!(await bucket.head(ICON_KEY_PREFIX + name))) return false;
  await bucket.delete(ICON_KEY_PREFIX + name);
  return true;
}

/** The names of the stored icon files (at most `limit`). */
export async function listIconFiles(bucket: R2Bucket, limit = 1000): Promise<string[]> {
  const listed = await bucket.list({ prefix: ICON_KEY_PREFIX, limit });
  return listed.objects.map((object) => object.key.slice(ICON_KEY_PREFIX.length));
}

/**
 * The admin routes of what clients see (mounted under /admin, behind its bearer check):
 *
 *   PUT|GET|DELETE /admin/icons            the icons document (features/shaping/icons-document.ts)
 *   PUT|GET|DELETE /admin/overrides        the text overrides document (features/shaping/overrides-document.ts)
 *   PUT|GET|DELETE /admin/rules            the rules and hints document (features/shaping/rules-document.ts)
 *   GET            /admin/icons/files      names of the icon files the gateway serves
 *   PUT|DELETE     /admin/icons/files/<name>  an icon file (body: the image; Content-Type: its image type)
 */
import { ICONS_KEY, OVERRIDES_KEY, RULES_KEY } from "../../storage/document-keys";
import { Hono } from "../../admin/hono-app";
import { checkIcons } from "./icons-document";
import { checkOverrides } from "./overrides-document";
import { checkRules } from "./rules-document";
import {
  deleteIconFile,
  ICON_FILE_NAME,
  ICON_TYPES,
  iconType,
  listIconFiles,
  MAX_ICON_BYTES,
  putIconFile,
} from "./icon-files";
import { documentRoutes } from "../../admin/document-routes";
import { readBodyBytes } from "../../admin/read-body";

type ShapingBindings = { GATEWAY_KV?: KVNamespace; PAYLOADS?: R2Bucket };

/** Builds the shaping admin routes, mounted at /admin. */
export function createShapingAdmin(): Hono<{ Bindings: ShapingBindings }> {
  const admin = new Hono<{ Bindings: ShapingBindings }>();
  documentRoutes(admin, "/icons", { key: ICONS_KEY, label: "icons document", check: checkIcons });
  documentRoutes(admin, "/overrides", { key: OVERRIDES_KEY, label: "overrides document", check: checkOverrides });
  documentRoutes(admin, "/rules", { key: RULES_KEY, label: "rules document", check: checkRules });

  const bucketOf = (env: ShapingBindings): R2Bucket => {
    if (!env.PAYLOADS) throw new Error("the PAYLOADS binding is missing from wrangler.toml");
    return env.PAYLOADS;
  };
  admin.get("/icons/files", async (c) => c.json({ files: await listIconFiles(bucketOf(c.env)) }));
  admin.put("/icons/files/:name", async (c) => {
    const name = c.req.param("name");
    if (!ICON_FILE_NAME.test(name))
      return c.json(
        { error: "an icon file name is 1-128 letters, digits, '.', '-' or '_', starting with a letter or digit" },
        400,
      );
    const type = iconType(c.req.header("content-type") ?? null);
    if (!type)
      return c.json({ error: `Content-Type must be an image type icons may have: ${[...ICON_TYPES].join(", ")}` }, 415);
    const body = await readBodyBytes(c.req.raw, MAX_ICON_BYTES);
    if (body === undefined) return c.json({ error: `an icon file is at most ${MAX_ICON_BYTES} bytes` }, 413);
    if (body.byteLength === 0) return c.json({ error: "the body is empty; send the image" }, 400);
    const { etag } = await putIconFile(bucketOf(c.env), name, body, type);
    return c.json({ stored: name, contentType: type, bytes: body.byteLength, etag, path: `/icons/${name}` });
  });
  admin.delete("/icons/files/:name", async (c) => {
    const name = c.req.param("name");
    if (!ICON_FILE_NAME.test(name) || !(await deleteIconFile(bucketOf(c.env), name)))
      return c.json({ error: `no icon file named "${name}"` }, 404);
    return c.json({ deleted: name });
  });
  return admin;
}

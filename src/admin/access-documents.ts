/**
 * The admin API's access documents, behind the admin token: personas (who may call what)
 * and tool visibility (what tools/list shows). Validated like filter sets; nothing invalid
 * is stored; a write drops this isolate's cached copy at once (others within the TTL).
 *
 *   GET    /admin/personas              every persona
 *   PUT    /admin/personas/<name>       {"roles": [...], "allow": [...], "deny"?: [...], "default"?: false, "rateLimit"?: "..."}
 *   GET    /admin/personas/<name>
 *   DELETE /admin/personas/<name>
 *   PUT    /admin/visibility            {"allow"?: [...], "deny"?: [...]}
 *   GET    /admin/visibility, DELETE /admin/visibility
 *
 * All personas are one KV document ("personas"), so a caller's grant is one cached read;
 * two admins writing personas at the same moment may lose one write (KV has no
 * compare-and-swap), which is why each write answers with the persona as stored.
 */
import { Hono, type Context } from "hono";
import { checkPersona, checkPersonas, PERSONA_NAME, PERSONAS_KEY, type Persona } from "../policy/persona";
import { checkVisibility, VISIBILITY_KEY } from "../policy/visibility";
import { forgetDocument, parseDocument, type Checked } from "../storage/document-store";
import { readBodyText } from "./read-body";

const MAX_DOCUMENT_BYTES = 256 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace };
type AccessContext = Context<{ Bindings: Bindings }>;

function kvOf(c: AccessContext): KVNamespace {
  if (!c.env.GATEWAY_KV) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return c.env.GATEWAY_KV;
}

async function readBody(c: AccessContext): Promise<Checked<unknown>> {
  const text = await readBodyText(c.req.raw, MAX_DOCUMENT_BYTES);
  if (text === undefined) return { ok: false, problems: [{ path: "", message: `larger than ${MAX_DOCUMENT_BYTES} bytes` }] };
  return parseDocument(text);
}

/** The stored personas; an unreadable document reads as none (PUT then replaces it whole). */
async function storedPersonas(c: AccessContext): Promise<Record<string, Persona>> {
  const text = await kvOf(c).get(PERSONAS_KEY);
  const parsed = text === null ? undefined : parseDocument(text);
  const checked = parsed?.ok ? checkPersonas(parsed.value) : undefined;
  return checked?.ok ? { ...checked.value } : {};
}

async function writePersonas(c: AccessContext, personas: Record<string, Persona>): Promise<void> {
  if (Object.keys(personas).length === 0) await kvOf(c).delete(PERSONAS_KEY);
  else await kvOf(c).put(PERSONAS_KEY, JSON.stringify(personas));
  forgetDocument(PERSONAS_KEY);
}

/**
 * The persona and visibility routes, to be mounted under the authenticated admin app.
 *
 * @example
 * admin.route("/", createAccessRoutes());
 */
export function createAccessRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();

  routes.get("/personas", async (c) => c.json({ personas: await storedPersonas(c) }));

  routes.put("/personas/:name", async (c) => {
    const name = c.req.param("name");
    if (!PERSONA_NAME.test(name)) return c.json({ error: "invalid persona name", problems: [{ path: "", message: "a persona name is 1-64 letters, digits, '-' or '_'" }] }, 400);
    const body = await readBody(c);
    const checked = body.ok ? checkPersona(body.value) : body;
    if (!checked.ok) return c.json({ error: `invalid persona "${name}"; nothing was stored`, problems: checked.problems }, 400);
    const personas = { ...(await storedPersonas(c)), [name]: checked.value };
    const all = checkPersonas(personas);
    if (!all.ok) return c.json({ error: `persona "${name}" conflicts with the others; nothing was stored`, problems: all.problems }, 400);
    await writePersonas(c, personas);
    return c.json({ name, stored: checked.value });
  });

  routes.get("/personas/:name", async (c) => {
    const name = c.req.param("name");
    const personas = await storedPersonas(c);
    return Object.hasOwn(personas, name) ? c.json(personas[name]!) : c.json({ error: `no persona named "${name}"` }, 404);
  });

  routes.delete("/personas/:name", async (c) => {
    const name = c.req.param("name");
    const personas = await storedPersonas(c);
    if (!Object.hasOwn(personas, name)) return c.json({ error: `no persona named "${name}"` }, 404);
    delete personas[name];
    await writePersonas(c, personas);
    return c.json({ deleted: name });
  });

  routes.put("/visibility", async (c) => {
    const body = await readBody(c);
    const checked = body.ok ? checkVisibility(body.value) : body;
    if (!checked.ok) return c.json({ error: "invalid visibility; nothing was stored", problems: checked.problems }, 400);
    await kvOf(c).put(VISIBILITY_KEY, JSON.stringify(checked.value));
    forgetDocument(VISIBILITY_KEY);
    return c.json({ stored: checked.value });
  });

  routes.get("/visibility", async (c) => {
    const text = await kvOf(c).get(VISIBILITY_KEY);
    if (text === null) return c.json({ error: "no visibility is stored; tools/list shows every tool" }, 404);
    const parsed = parseDocument(text);
    return parsed.ok ? c.json(parsed.value as object) : c.text(text);
  });

  routes.delete("/visibility", async (c) => {
    await kvOf(c).delete(VISIBILITY_KEY);
    forgetDocument(VISIBILITY_KEY);
    return c.json({ deleted: "visibility" });
  });

  return routes;
}

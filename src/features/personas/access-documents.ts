/**
 * The admin API's access documents, behind the admin token: personas (who may call what)
 * and tool visibility (what tools/list shows). Validated like filter sets; nothing invalid
 * is stored; a write drops this isolate's cached copy at once (others within the TTL).
 *
 *   GET    /admin/personas              every persona
 *   PUT    /admin/personas              {"personas": {<name>: {...}, ...}}: the whole document, replaced
 *   PUT    /admin/personas/<name>       {"roles": [...], "allow": [...], "deny"?: [...], "default"?: false, "rateLimit"?: "...", "catalog"?: "full|compact|search"}
 *   GET    /admin/personas/<name>
 *   DELETE /admin/personas/<name>
 *   PUT    /admin/visibility            {"allow"?: [...], "deny"?: [...]}
 *   GET    /admin/visibility, DELETE /admin/visibility
 *
 * All personas are one KV document ("personas"), so a caller's grant is one cached read.
 * Every GET answers the document's ETag and every write takes If-Match (412 when the
 * document changed since: document-versions.ts), so two admins editing personas at once
 * do not lose one write silently; without If-Match a write stays unconditional. A stored
 * document that is invalid (written straight into KV) is never edited one persona at a
 * time: that would keep only the persona written. Such a write is refused (409) until the
 * whole document is replaced.
 */
import { PERSONAS_KEY, VISIBILITY_KEY } from "../../storage/document-keys";
import type { Context } from "hono";
import { Hono } from "../../admin/hono-app";
import { isObject } from "../../core/jsonrpc";
import { checkPersona, checkPersonas, PERSONA_NAME, type Persona } from "./persona";
import { checkVisibility } from "./visibility-document";
import { forgetDocument, formatProblems, parseDocument, type Checked } from "../../storage/document-store";
import { readBodyText } from "../../admin/read-body";
import { documentResponse } from "../../admin/document-routes";
import {
  conditionalWrite,
  deleteDocument,
  etagHeaders,
  storeDocument,
  type DocumentShape,
} from "../../admin/document-versions";

const MAX_DOCUMENT_BYTES = 256 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace };
type AccessContext = Context<{ Bindings: Bindings }>;

function kvOf(c: AccessContext): KVNamespace {
  if (!c.env.GATEWAY_KV) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return c.env.GATEWAY_KV;
}

async function readBody(c: AccessContext): Promise<Checked<unknown>> {
  const text = await readBodyText(c.req.raw, MAX_DOCUMENT_BYTES);
  if (text === undefined)
    return { ok: false, problems: [{ path: "", message: `larger than ${MAX_DOCUMENT_BYTES} bytes` }] };
  return parseDocument(text);
}

/** The personas in the document's stored text (none stored: none), or why the stored text is invalid. */
async function storedPersonas(text: string | null): Promise<Checked<Record<string, Persona>>> {
  if (text === null) return { ok: true, value: {} };
  const parsed = await parseDocument(text);
  const checked = parsed.ok ? checkPersonas(parsed.value) : parsed;
  return checked.ok ? { ok: true, value: { ...checked.value } } : checked;
}

/** The personas in the document's stored text; an invalid document reads as none (callers that write check `storedPersonas` first). */
async function personasIn(text: string | null): Promise<Record<string, Persona>> {
  const stored = await storedPersonas(text);
  return stored.ok ? stored.value : {};
}

/** The 409 of a one-persona write while the stored document is invalid: editing it would drop every other persona. */
function invalidStoredDocument(c: AccessContext, problems: Checked<unknown> & { ok: false }): Response {
  return c.json(
    {
      error: `the stored personas document (KV "${PERSONAS_KEY}") is invalid (${formatProblems(problems.problems)}), so one persona cannot be written without losing the others; nothing was changed. Replace the whole document: PUT /admin/personas with {"personas": {<name>: {...}, ...}} (GET /admin/personas shows what is stored)`,
      problems: problems.problems,
    },
    409,
  );
}

/** The personas document always has a representation (none stored reads as `{}`); `If-Match: *` asks for the named persona. */
function personasShape(name?: string): DocumentShape {
  return {
    absentHasEtag: true,
    exists: async (stored) => name === undefined || Object.hasOwn(await personasIn(stored), name),
  };
}

/** Stores `personas` (deleting the document when none is left); the stored text, null when deleted. */
async function writePersonas(c: AccessContext, personas: Record<string, Persona>): Promise<string | null> {
  const text = Object.keys(personas).length === 0 ? null : JSON.stringify(personas);
  if (text === null) await kvOf(c).delete(PERSONAS_KEY);
  else await kvOf(c).put(PERSONAS_KEY, text);
  forgetDocument(PERSONAS_KEY);
  return text;
}

/** A GET of the personas document (or of one persona in it), with the document's ETag. */
async function readPersonas(
  c: AccessContext,
): Promise<{ personas: Record<string, Persona>; headers: Record<string, string> }> {
  const text = await kvOf(c).get(PERSONAS_KEY);
  return { personas: await personasIn(text), headers: await etagHeaders(text, personasShape()) };
}

/**
 * The persona and visibility routes, to be mounted under the authenticated admin app.
 *
 * @example
 * admin.route("/", createAccessRoutes());
 */
export function createAccessRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();

  routes.get("/personas", async (c) => {
    const text = await kvOf(c).get(PERSONAS_KEY);
    const stored = await storedPersonas(text);
    const headers = await etagHeaders(text, personasShape());
    if (stored.ok) return c.json({ personas: stored.value }, 200, headers);
    // Nothing of an invalid document applies (every caller is denied): say so, and show what is stored.
    return c.json({ personas: {}, invalid: { problems: stored.problems, stored: text } }, 200, headers);
  });

  routes.put("/personas", async (c) => {
    const body = await readBody(c);
    const document =
      body.ok && isObject(body.value) && Object.keys(body.value).length === 1 ? body.value["personas"] : undefined;
    if (body.ok && document === undefined)
      return c.json(
        {
          error: 'send {"personas": {<name>: {...}, ...}} (what GET /admin/personas answers); nothing was stored',
          problems: [{ path: "", message: 'expected one member, "personas"' }],
        },
        400,
      );
    const checked = body.ok ? checkPersonas(document) : body;
    if (!checked.ok)
      return c.json(
        {
          error: "invalid personas document; nothing was stored",
          problems: checked.problems.map((p) => ({ ...p, path: `/personas${p.path}` })),
        },
        400,
      );
    return conditionalWrite(c, kvOf(c), PERSONAS_KEY, personasShape(), async () => ({
      response: c.json({ personas: checked.value }),
      stored: await writePersonas(c, { ...checked.value }),
    }));
  });

  routes.put("/personas/:name", async (c) => {
    const name = c.req.param("name");
    if (!PERSONA_NAME.test(name))
      return c.json(
        {
          error: "invalid persona name",
          problems: [{ path: "", message: "a persona name is 1-64 letters, digits, '-' or '_'" }],
        },
        400,
      );
    const body = await readBody(c);
    const checked = body.ok ? checkPersona(body.value) : body;
    if (!checked.ok)
      return c.json({ error: `invalid persona "${name}"; nothing was stored`, problems: checked.problems }, 400);
    return conditionalWrite(c, kvOf(c), PERSONAS_KEY, personasShape(name), async (text) => {
      const stored = await storedPersonas(text);
      if (!stored.ok) return { response: invalidStoredDocument(c, stored) };
      const personas = { ...stored.value, [name]: checked.value };
      const all = checkPersonas(personas);
      if (!all.ok)
        return {
          response: c.json(
            { error: `persona "${name}" conflicts with the others; nothing was stored`, problems: all.problems },
            400,
          ),
        };
      return { response: c.json({ name, stored: checked.value }), stored: await writePersonas(c, personas) };
    });
  });

  routes.get("/personas/:name", async (c) => {
    const name = c.req.param("name");
    const { personas, headers } = await readPersonas(c);
    return Object.hasOwn(personas, name)
      ? c.json(personas[name]!, 200, headers)
      : c.json({ error: `no persona named "${name}"` }, 404, headers);
  });

  routes.delete("/personas/:name", async (c) => {
    const name = c.req.param("name");
    return conditionalWrite(c, kvOf(c), PERSONAS_KEY, personasShape(name), async (text) => {
      const stored = await storedPersonas(text);
      if (!stored.ok) return { response: invalidStoredDocument(c, stored) };
      const personas = stored.value;
      if (!Object.hasOwn(personas, name)) return { response: c.json({ error: `no persona named "${name}"` }, 404) };
      delete personas[name];
      return { response: c.json({ deleted: name }), stored: await writePersonas(c, personas) };
    });
  });

  routes.put("/visibility", async (c) => {
    const body = await readBody(c);
    const checked = body.ok ? checkVisibility(body.value) : body;
    if (!checked.ok)
      return c.json({ error: "invalid visibility; nothing was stored", problems: checked.problems }, 400);
    return storeDocument(c, kvOf(c), VISIBILITY_KEY, checked.value, forgetDocument);
  });

  routes.get("/visibility", async (c) =>
    documentResponse(c, await kvOf(c).get(VISIBILITY_KEY), "no visibility is stored; tools/list shows every tool"),
  );

  routes.delete("/visibility", async (c) =>
    deleteDocument(c, kvOf(c), VISIBILITY_KEY, { label: "visibility", forget: forgetDocument }),
  );

  return routes;
}

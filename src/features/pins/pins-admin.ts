/**
 * Pins for operators (mounted under /admin, behind its bearer check):
 *
 *   GET    /admin/pins                              every pinned upstream: definitions, status, findings, pending changes with a diff
 *   GET    /admin/pins/<upstream>                   one upstream
 *   POST   /admin/pins/<upstream>/<name>/approve    body {"digest": "sha256:…", "kind"?: "tool"|"prompt"}
 *   POST   /admin/pins/<upstream>/<name>/reject     body {"digest": "sha256:…", "kind"?: …}
 *   DELETE /admin/pins/<upstream>/<name>?kind=      forget one definition (its next sight is a first sight)
 *   DELETE /admin/pins/<upstream>?kind=&name=       the same, for any name ("", "." and ".." cannot be a path segment)
 *   DELETE /admin/pins/<upstream>                   forget all of an upstream's (no `name` parameter)
 *
 * Approval and rejection are by digest: the digest must be the version the upstream
 * serves now, so an approval never covers a change newer than the one its author saw
 * (an older digest is refused with 409, naming the current one).
 */
import type { Context } from "hono";
import { Hono } from "../../admin/hono-app";
import { gatewayConfig } from "../../config/gateway-config";
import type { UpstreamConfig } from "../../config/upstreams";
import { isObject } from "../../core/jsonrpc";
import { definitionObject, shownDefinition, type PinKind } from "./pin-definition";
import { definitionDiff } from "./pin-diff";
import { MAX_DEFINITION_DEPTH, ruleTable } from "./pin-findings";
import { DUPLICATE_MEMBER_RULE_ROW, DUPLICATE_NAME_RULE_ROW } from "./pin-duplicates";
import {
  approve,
  approvedVersion,
  EMPTY_DECISIONS,
  EMPTY_PINS,
  pinId,
  pinStatus,
  reject,
  withoutEntries,
  type ObservedPin,
  type PinDecision,
} from "./pins";
import { readPins, saveBoth, saveDecisions, readSweepReport, serialized, type UpstreamPins } from "./pin-store";
import { pinningOf } from "./pin-observation";
import { readBodyText } from "../../admin/read-body";

type PinBindings = { GATEWAY_KV?: KVNamespace; [binding: string]: unknown };
type PinContext = Context<{ Bindings: PinBindings }>;

const MAX_BODY_BYTES = 4 * 1024;

const NAME_NOT_IN_PATH = (upstream: string) =>
  `no definition name in the path (a name "", "." or ".." cannot be a path segment: URLs drop it); ` +
  `forget one by its name in the query: DELETE /admin/pins/${upstream}?kind=tool&name=<name>`;

function configured(env: PinBindings): readonly UpstreamConfig[] {
  const parsed = gatewayConfig(env).upstreams;
  return parsed.ok ? parsed.value : [];
}

function describePin(
  pin: ObservedPin,
  decision: PinDecision | undefined,
  upstream: UpstreamConfig,
): Record<string, unknown> {
  const mode = pinningOf(upstream);
  const approved = approvedVersion(pin, decision, mode, upstream.approveNew === true);
  const status = pinStatus(pin, decision, mode, upstream.approveNew === true);
  const out: Record<string, unknown> = {
    kind: pin.kind,
    name: pin.name,
    status,
    ...(pin.removedAt !== undefined ? { removedAt: pin.removedAt } : {}),
    approved: approved
      ? {
          digest: approved.digest,
          seenAt: approved.seenAt,
          findings: approved.findings,
          definition: shownDefinition(approved.definition, MAX_DEFINITION_DEPTH),
        }
      : null,
    ...(decision?.rejected ? { rejected: decision.rejected } : {}),
  };
  if (status !== "pinned") {
    const before = approved ? definitionObject(approved.definition) : undefined;
    const after = definitionObject(pin.latest.definition);
    out["pending"] = {
      digest: pin.latest.digest,
      seenAt: pin.latest.seenAt,
      findings: pin.latest.findings,
      definition: shownDefinition(pin.latest.definition, MAX_DEFINITION_DEPTH),
      diff: after ? definitionDiff(pin.kind, before ?? {}, after) : null,
    };
  }
  return out;
}

/** Pins' part of each upstream in GET /admin/upstreams (admin/upstreams.ts): mode, counts, definitions not approved. */
export async function upstreamPinFacts(
  upstream: UpstreamConfig,
  kv: KVNamespace | undefined,
): Promise<Readonly<Record<string, unknown>>> {
  return {
    pins:
      kv && pinningOf(upstream) !== "off"
        ? describeUpstreamPins(upstream, await readPins(kv, upstream.name), false)
        : { mode: "off" },
  };
}

/** What GET /admin/pins says of one upstream, also the pins part of GET /admin/upstreams (`full: false`). */
export function describeUpstreamPins(
  upstream: UpstreamConfig,
  state: UpstreamPins,
  full = true,
): Record<string, unknown> {
  const pins = Object.entries(state.pins.entries).map(([id, pin]) =>
    describePin(pin, state.decisions.entries[id], upstream),
  );
  const count = (status: string) => pins.filter((pin) => pin.status === status).length;
  const summary = {
    mode: pinningOf(upstream),
    approveNew: upstream.approveNew === true,
    // Definitions with an approved version, changed since (pending, rejected) or not: clients are held to it.
    pinned: pins.filter((pin) => pin.approved !== null).length,
    pending: count("pending"),
    rejected: count("rejected"),
    held: count("held"),
    removed: pins.filter((pin) => pin.removedAt !== undefined).length,
    withFindings: Object.values(state.pins.entries).filter((pin) => pin.latest.findings.length > 0).length,
  };
  if (!full)
    return {
      ...summary,
      changes: pins
        .filter((pin) => pin.status !== "pinned" || pin.removedAt !== undefined)
        .map((pin) => ({
          kind: pin.kind,
          name: pin.name,
          status: pin.status,
          ...(pin.removedAt !== undefined ? { removedAt: pin.removedAt } : {}),
        })),
    };
  return { upstream: upstream.name, ...summary, definitions: pins };
}

function kvOf(c: PinContext): KVNamespace {
  const kv = c.env.GATEWAY_KV;
  if (!kv) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return kv;
}

function kindOf(value: unknown): PinKind | undefined {
  return value === undefined || value === "tool" ? "tool" : value === "prompt" ? "prompt" : undefined;
}

async function decide(c: PinContext, verdict: "approve" | "reject"): Promise<Response> {
  const upstream = configured(c.env).find((u) => u.name === c.req.param("upstream"));
  if (!upstream) return c.json({ error: `no upstream named "${c.req.param("upstream")}"` }, 404);
  const text = await readBodyText(c.req.raw, MAX_BODY_BYTES);
  let body: unknown;
  try {
    body = text === undefined ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const kind = isObject(body) ? kindOf(body["kind"]) : undefined;
  if (!isObject(body) || typeof body["digest"] !== "string" || !kind) {
    return c.json(
      {
        error: `send {"digest": "sha256:…"} (and "kind": "prompt" for a prompt): the digest of the version to ${verdict}, from GET /admin/pins/${upstream.name}`,
      },
      400,
    );
  }
  const digest = body["digest"];
  const name = c.req.param("name")!;
  const kv = kvOf(c);
  // Decisions of one upstream are one document: read, change and write it one write at a
  // time in this isolate (lists that record changes wait their turn too).
  return serialized(upstream.name, async () => {
    const state = await readPins(kv, upstream.name);
    if (state.invalid) return invalidPinDocuments(c, upstream.name, state.invalid);
    const id = pinId(kind, name);
    const pin = state.pins.entries[id];
    if (!pin) return c.json({ error: `no ${kind} "${name}" is pinned for upstream "${upstream.name}"` }, 404);
    if (pin.latest.digest !== digest) {
      return c.json(
        {
          error: `${digest} is not the version upstream "${upstream.name}" serves now: ${kind} "${name}" is at ${pin.latest.digest}; review that one (GET /admin/pins/${upstream.name}) and ${verdict} it by its digest`,
          current: pin.latest.digest,
        },
        409,
      );
    }
    const decisions =
      verdict === "approve" ? approve(state.decisions, id, pin.latest) : reject(state.decisions, id, digest);
    await saveDecisions(kv, upstream.name, decisions);
    return c.json(describePin(pin, decisions.entries[id], upstream));
  });
}

/**
 * The 409 of a one-definition write while a stored pins document of the upstream is invalid
 * (read as empty): writing it would keep only that one entry.
 */
function invalidPinDocuments(c: Context, upstream: string, keys: readonly string[]): Response {
  return c.json(
    {
      error: `the stored pins of upstream "${upstream}" are invalid (KV ${keys.map((key) => `"${key}"`).join(" and ")} ${keys.length === 1 ? "is not a pins document" : "are not pins documents"}), so one definition cannot be decided or forgotten without losing the others; nothing was changed. Replace them whole: DELETE /admin/pins/${upstream} forgets the upstream's pins and decisions (its definitions are pinned afresh at the next list), or write valid documents to those keys`,
      invalid: keys,
    },
    409,
  );
}

/** Forgets one definition (DELETE /admin/pins/<upstream>/<name>, or ?name= for a name a path cannot carry). */
function forgetOne(c: PinContext, upstreamName: string, name: string): Promise<Response> | Response {
  const kind = kindOf(c.req.query("kind"));
  if (!kind) return c.json({ error: 'kind must be "tool" or "prompt"' }, 400);
  const kv = kvOf(c);
  return serialized(upstreamName, async () => {
    const state = await readPins(kv, upstreamName);
    if (state.invalid) return invalidPinDocuments(c, upstreamName, state.invalid);
    const id = pinId(kind, name);
    if (!Object.hasOwn(state.pins.entries, id) && !Object.hasOwn(state.decisions.entries, id)) {
      return c.json({ error: `no ${kind} ${JSON.stringify(name)} is pinned for upstream "${upstreamName}"` }, 404);
    }
    const drop = (entry: string) => entry === id;
    const rest = { pins: withoutEntries(state.pins, drop), decisions: withoutEntries(state.decisions, drop) };
    await saveBoth(kv, upstreamName, rest);
    return c.json({ forgotten: { upstream: upstreamName, kind, name } });
  });
}

/** Builds the pin routes, mounted at /admin. */
export function createPinsAdmin(): Hono<{ Bindings: PinBindings }> {
  const admin = new Hono<{ Bindings: PinBindings }>();
  const noStore = { "cache-control": "no-store" };
  admin.get("/pins", async (c) => {
    const kv = kvOf(c);
    const upstreams = configured(c.env).filter((u) => pinningOf(u) !== "off");
    const described = await Promise.all(
      upstreams.map(async (u) => describeUpstreamPins(u, await readPins(kv, u.name))),
    );
    const sweep = await readSweepReport<unknown>(kv);
    const rules = [...ruleTable(), DUPLICATE_NAME_RULE_ROW, DUPLICATE_MEMBER_RULE_ROW];
    return c.json({ upstreams: described, lastSweep: sweep ?? null, rules }, 200, noStore);
  });
  admin.get("/pins/:upstream", async (c) => {
    const upstream = configured(c.env).find((u) => u.name === c.req.param("upstream"));
    if (!upstream) return c.json({ error: `no upstream named "${c.req.param("upstream")}"` }, 404);
    return c.json(describeUpstreamPins(upstream, await readPins(kvOf(c), upstream.name)), 200, noStore);
  });
  admin.post("/pins/:upstream/:name/approve", (c) => decide(c, "approve"));
  admin.post("/pins/:upstream/:name/reject", (c) => decide(c, "reject"));
  admin.delete("/pins/:upstream/:name", (c) => forgetOne(c, c.req.param("upstream"), c.req.param("name")));
  // What a URL makes of a name "", "." or ".." in the path (the dot segments are removed before any route sees them).
  admin.delete("/pins/:upstream/", (c) => c.json({ error: NAME_NOT_IN_PATH(c.req.param("upstream")) }, 400));
  admin.delete("/pins/", (c) => c.json({ error: NAME_NOT_IN_PATH("<upstream>") }, 400));
  admin.delete("/pins/:upstream", async (c) => {
    const upstreamName = c.req.param("upstream");
    // ?name= (any name, "" included) forgets one definition: a name never widens the action to the upstream.
    const name = c.req.query("name");
    if (name !== undefined) return forgetOne(c, upstreamName, name);
    const kv = kvOf(c);
    return serialized(upstreamName, async () => {
      // An upstream no longer configured may still have pins to forget; a name with neither is a typo.
      if (!configured(c.env).some((u) => u.name === upstreamName)) {
        const state = await readPins(kv, upstreamName);
        const stored =
          state.invalid !== undefined ||
          Object.keys(state.pins.entries).length > 0 ||
          Object.keys(state.decisions.entries).length > 0;
        if (!stored) return c.json({ error: `no upstream named "${upstreamName}" is configured or has pins` }, 404);
      }
      await saveBoth(kv, upstreamName, { pins: EMPTY_PINS, decisions: EMPTY_DECISIONS });
      return c.json({ forgotten: { upstream: upstreamName } });
    });
  });
  return admin;
}

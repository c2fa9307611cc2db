/**
 * What a pinned definition is: every member of a tool or prompt but its name (the pin
 * name stands for it: the listed name differs between routes), `_meta` and `icons`, and
 * their fingerprint. A member an agent or a client may read — `x-instructions`,
 * `execution.note`, any member no revision defines — changes the fingerprint like a
 * description does, so under `enforce` it is held and scanned like one; and since
 * nothing is left out of what is served, clients get the upstream's bytes unchanged while
 * the definition is the approved one. `_meta` is where the gateway's own layers (output
 * filters, inside pinning) and SDKs write bookkeeping, per caller; icons are for people:
 * neither is pinned.
 */
import { canonicalDigest, canonicalJson } from "../../core/canonical-json";
import { isObject, type JsonObject } from "../../core/jsonrpc";

import type { PinKind } from "./pin-store";

export type { PinKind };

/**
 * The members each kind was fingerprinted by before every member was: they stay at the top
 * of the material, the others go under `members`, so a definition with none of the others
 * keeps the digest it had (stored pins and approvals stay valid).
 */
export const CORE_MEMBERS: Readonly<Record<PinKind, readonly string[]>> = {
  tool: ["title", "description", "inputSchema", "outputSchema", "annotations"],
  prompt: ["title", "description", "arguments"],
};

/** Members that are not part of a pinned definition. */
const UNPINNED_MEMBERS: ReadonlySet<string> = new Set(["name", "_meta", "icons"]);

/** True when member `key` of a definition is fingerprinted. */
export function isPinnedMember(key: string): boolean {
  return !UNPINNED_MEMBERS.has(key);
}

/**
 * The fingerprinted part of a definition: its pin name, the core members present (an
 * absent member and one set to null differ), and every other pinned member under `members`.
 */
export function fingerprintMaterial(kind: PinKind, name: string, definition: JsonObject): JsonObject {
  const others = otherMembers(kind, definition);
  return { ...coreMaterial(kind, name, definition), ...(others ? { members: others } : {}) };
}

function coreMaterial(kind: PinKind, name: string, definition: JsonObject): JsonObject {
  const out: JsonObject = { kind, name };
  for (const key of CORE_MEMBERS[kind]) if (Object.hasOwn(definition, key)) out[key] = definition[key];
  return out;
}

function otherMembers(kind: PinKind, definition: JsonObject): JsonObject | undefined {
  const core = new Set(CORE_MEMBERS[kind]);
  const others = Object.keys(definition).filter((key) => isPinnedMember(key) && !core.has(key));
  return others.length > 0 ? Object.fromEntries(others.map((key) => [key, definition[key]])) : undefined;
}

/**
 * True when `stored` is `definition` as pins recorded it before every member was pinned:
 * its digest is that of the core members alone, and its other members are the same. Such
 * a version is the same definition and keeps its digest, so pins and approvals made then
 * stay valid (an SDK writes `execution` into every tool: without this, each would show as
 * changed once).
 */
export async function isEarlierDigestOf(
  kind: PinKind,
  name: string,
  definition: JsonObject,
  stored: { readonly digest: string; readonly definition: string },
): Promise<boolean> {
  if (!otherMembers(kind, definition)) return false; // its digest is the core members' already
  const before = definitionObject(stored.definition);
  if (!before) return false;
  if (`sha256:${await canonicalDigest(coreMaterial(kind, name, definition))}` !== stored.digest) return false;
  return canonicalJson(otherMembers(kind, before) ?? null) === canonicalJson(otherMembers(kind, definition) ?? null);
}

/**
 * The fingerprint of a definition: SHA-256 of the canonical JSON of its material,
 * base64url, prefixed `sha256:` so an operator can tell it from a name.
 *
 * @example
 * await fingerprint("tool", "echo", { name: "alpha___echo", description: "Echoes" }); // "sha256:…"
 */
export async function fingerprint(kind: PinKind, name: string, definition: JsonObject): Promise<string> {
  return `sha256:${await canonicalDigest(fingerprintMaterial(kind, name, definition))}`;
}

/** The definition's object, when `raw` is one. */
export function definitionObject(raw: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when `value` nests containers more than `limit` levels deep (walked with an explicit
 * stack, so any depth is measured safely): such a value is not handed to code that recurses,
 * JSON.stringify included.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: item, depth } = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item))
      stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

/** A stored definition as an operator is shown it: its object, or its text when it cannot be read or nests too deep to serialise. */
export function shownDefinition(raw: string, depthLimit: number): JsonObject | string {
  const object = definitionObject(raw);
  return object && !nestsDeeperThan(object, depthLimit) ? object : raw;
}

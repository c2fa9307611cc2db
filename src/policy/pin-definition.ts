/**
 * What a pinned definition is: the members of a tool or prompt that tell the model what
 * it does and what it takes, and their fingerprint. Icons and `_meta` are left out (they
 * change for reasons that are not the tool's behaviour, and `_meta` is where gateways and
 * SDKs write bookkeeping); everything an agent reads or sends by is in.
 */
import { canonicalDigest } from "../core/canonical-json";
import { isObject, type JsonObject } from "../core/jsonrpc";

import type { PinKind } from "../storage/pin-store";

export type { PinKind };

/** The members each kind is fingerprinted by (besides its name). */
export const FINGERPRINTED_MEMBERS: Readonly<Record<PinKind, readonly string[]>> = {
  tool: ["title", "description", "inputSchema", "outputSchema", "annotations"],
  prompt: ["title", "description", "arguments"],
};

/**
 * The fingerprinted part of a definition: its pin name and the members above, those
 * present only (an absent member and one set to null differ).
 */
export function fingerprintMaterial(kind: PinKind, name: string, definition: JsonObject): JsonObject {
  const out: JsonObject = { kind, name };
  for (const key of FINGERPRINTED_MEMBERS[kind]) if (Object.hasOwn(definition, key)) out[key] = definition[key];
  return out;
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
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

/** A stored definition as an operator is shown it: its object, or its text when it cannot be read or nests too deep to serialise. */
export function shownDefinition(raw: string, depthLimit: number): JsonObject | string {
  const object = definitionObject(raw);
  return object && !nestsDeeperThan(object, depthLimit) ? object : raw;
}

/**
 * Names on the aggregated endpoint: `<upstream>___<name>`, kept within the
 * `^[a-zA-Z0-9_-]{1,64}$` rule that clients enforce on tool names.
 *
 * A name that would be longer than 64 characters is cut and given an 8-hex-digit hash
 * of the full name, so the result is deterministic: the same upstream tool always gets
 * the same name, on every isolate, with no table to keep. The cut falls between whole
 * characters: a surrogate pair is never split (such a name is then 63 units long).
 */

export const NAME_SEPARATOR = "___";
/** The virtual upstream of the gateway's own tools; never a configured upstream's name. */
export const SYS_UPSTREAM = "sys";
/** The prefix of the gateway's own tools: never filtered, offloaded or forwarded. */
export const SYS_PREFIX = `${SYS_UPSTREAM}${NAME_SEPARATOR}`;
/** The gateway's tool that reads back what offload stored. */
export const READ_PAYLOAD_TOOL = `${SYS_PREFIX}read_payload`;
export const MAX_NAME_LENGTH = 64;
const HASH_SUFFIX_LENGTH = 9; // "_" + 8 hex digits
const HASHED_NAME = /_[0-9a-f]{8}$/;

/** FNV-1a, 32 bits, over UTF-16 code units: cheap, stable, good enough to separate names. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** The aggregated name of an upstream's tool or prompt. */
export function qualifyName(upstream: string, name: string): string {
  const full = `${upstream}${NAME_SEPARATOR}${name}`;
  if (full.length <= MAX_NAME_LENGTH) return full;
  let cut = MAX_NAME_LENGTH - HASH_SUFFIX_LENGTH;
  if (isHighSurrogate(full.charCodeAt(cut - 1))) cut--;
  return `${full.slice(0, cut)}_${fnv1a(full)}`;
}

/**
 * The visible start of `name` when it may be a shortened one (63 or 64 units ending in `_`
 * and 8 hex digits): what comes before the hash. Undefined for any other name.
 */
export function shortenedStart(name: string): string | undefined {
  return name.length >= MAX_NAME_LENGTH - 1 && name.length <= MAX_NAME_LENGTH && HASHED_NAME.test(name)
    ? name.slice(0, -HASH_SUFFIX_LENGTH)
    : undefined;
}

export type QualifiedName = {
  readonly upstream: string;
  readonly name: string;
  /** True when the name may have been shortened: the upstream's list decides which tool it is. */
  readonly maybeShortened: boolean;
};

/**
 * Splits an aggregated name at its first separator; undefined when it has none, or when
 * it is longer than any name the gateway lists (a long tool is only known by its
 * shortened name, so filters and offload rules have one key for it on every route).
 */
export function splitName(qualified: string): QualifiedName | undefined {
  const at = qualified.indexOf(NAME_SEPARATOR);
  if (at <= 0 || at + NAME_SEPARATOR.length === qualified.length || qualified.length > MAX_NAME_LENGTH)
    return undefined;
  return {
    upstream: qualified.slice(0, at),
    name: qualified.slice(at + NAME_SEPARATOR.length),
    // 63 when the cut stepped back over a surrogate pair.
    maybeShortened: qualified.length >= MAX_NAME_LENGTH - 1 && HASHED_NAME.test(qualified),
  };
}

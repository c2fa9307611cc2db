/**
 * The isolate's memory of which upstream serves each resource URI (relay/relay.ts) is
 * bounded in entries and in characters: upstreams choose their URIs, and a cache that kept
 * every long one an isolate ever saw would grow with traffic and never come back (issue 38).
 * A URI it does not keep is still read: a miss asks every upstream.
 */
import { describe, expect, it } from "vitest";
import {
  knownUriOwner,
  MAX_REMEMBERED_URI_CHARS,
  rememberUris,
  URI_OWNER_ENTRIES,
  URI_OWNER_MAX_CHARS,
} from "../../src/relay/relay";
import type { CallContext } from "../../src/context/call-context";

const ctx = { route: { upstreams: [{ name: "alpha" }] } } as unknown as Pick<CallContext, "route">;

/** `count` distinct URIs of `chars` characters each, numbered from `from`. */
function uris(count: number, chars: number, from = 0): { uri: string }[] {
  return Array.from({ length: count }, (_, i) => {
    const head = `test://${from + i}/`;
    return { uri: head + "x".repeat(chars - head.length) };
  });
}

describe("remembered URI owners", () => {
  it("keeps a URI up to the length bound, not past it", () => {
    const [atBound] = uris(1, MAX_REMEMBERED_URI_CHARS, 1_000_000);
    const [past] = uris(1, MAX_REMEMBERED_URI_CHARS + 1, 2_000_000);
    rememberUris(ctx, "alpha", [atBound!, past!]);
    expect(knownUriOwner(atBound!.uri)).toBe("alpha");
    expect(knownUriOwner(past!.uri)).toBeUndefined();
  });

  it("holds at most URI_OWNER_MAX_CHARS characters of URIs", () => {
    const count = Math.ceil((2 * URI_OWNER_MAX_CHARS) / MAX_REMEMBERED_URI_CHARS);
    expect(count).toBeLessThan(URI_OWNER_ENTRIES); // the character bound, not the entry bound, is what acts here
    const listed = uris(count, MAX_REMEMBERED_URI_CHARS, 3_000_000);
    rememberUris(ctx, "alpha", listed);
    const kept = listed.filter(({ uri }) => knownUriOwner(uri) !== undefined);
    expect(kept.length * MAX_REMEMBERED_URI_CHARS).toBeLessThanOrEqual(URI_OWNER_MAX_CHARS);
    expect(knownUriOwner(listed.at(-1)!.uri)).toBe("alpha"); // the latest are kept
    expect(knownUriOwner(listed[0]!.uri)).toBeUndefined();
  });

  it("holds at most URI_OWNER_ENTRIES URIs", () => {
    const listed = uris(URI_OWNER_ENTRIES + 10, 20, 4_000_000);
    rememberUris(ctx, "alpha", listed);
    const kept = listed.filter(({ uri }) => knownUriOwner(uri) !== undefined);
    expect(kept.length).toBeLessThanOrEqual(URI_OWNER_ENTRIES);
    expect(knownUriOwner(listed.at(-1)!.uri)).toBe("alpha");
  });
});

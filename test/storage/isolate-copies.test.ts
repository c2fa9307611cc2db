/**
 * An isolate's copies of KV values are bounded in keys: a named server's document is looked
 * up by the name in a request's URL, and its absence is kept like a document, so requests for
 * made-up names must not grow the isolate's memory without end.
 */
import { describe, expect, it } from "vitest";
import { IsolateCopies, MAX_COPIES } from "../../src/storage/isolate-copies";

describe("an isolate's copies", () => {
  it("keep at most MAX_COPIES keys, dropping the oldest, and keep serving the newest", async () => {
    const copies = new IsolateCopies<string | null>();
    const reads = new Map<string, number>();
    const load = (key: string) =>
      copies.load(key, 60_000, async () => {
        reads.set(key, (reads.get(key) ?? 0) + 1);
        return null;
      });
    for (let i = 0; i <= MAX_COPIES; i++) await load(`servers/made-up-${i}`);
    // The newest is still a copy; the oldest was dropped and is read again.
    await load(`servers/made-up-${MAX_COPIES}`);
    expect(reads.get(`servers/made-up-${MAX_COPIES}`)).toBe(1);
    await load("servers/made-up-0");
    expect(reads.get("servers/made-up-0")).toBe(2);
    await load("servers/made-up-1");
    expect(reads.get("servers/made-up-1")).toBe(2);
  });

  it("still forget a copy on write, and remember a written one", async () => {
    const copies = new IsolateCopies<string>();
    let reads = 0;
    const read = async () => `read ${++reads}`;
    expect(await copies.load("doc", 60_000, read)).toBe("read 1");
    copies.remember("doc", "written");
    expect(await copies.load("doc", 60_000, read)).toBe("written");
    copies.forget("doc");
    expect(await copies.load("doc", 60_000, read)).toBe("read 2");
  });
});

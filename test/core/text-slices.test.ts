/**
 * Reading a byte stream as text in small strings (core/text-slices.ts): every character
 * whole however the bytes are cut, no string longer than a slice, no empty string.
 */
import { describe, expect, it } from "vitest";
import { textSlices } from "../../src/core/text-slices";

/** A stream of `bytes` cut into chunks of the given sizes (the last takes the rest). */
function streamOf(bytes: Uint8Array, cuts: readonly number[]): ReadableStream<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (const cut of cuts) {
    chunks.push(bytes.subarray(at, Math.min(bytes.length, at + cut)));
    at = Math.min(bytes.length, at + cut);
  }
  chunks.push(bytes.subarray(at));
  return new ReadableStream({
    pull: (controller) => (chunks.length ? controller.enqueue(chunks.shift()!) : controller.close()),
  });
}

async function readAll(body: ReadableStream<Uint8Array>, sliceBytes: number): Promise<string[]> {
  const reader = textSlices(body, sliceBytes);
  const out: string[] = [];
  for (;;) {
    const next = await reader.read();
    if (next.done) return out;
    out.push(next.value);
  }
}

const TEXT = `plain é ü ∑ 😀 {"k":"😀😀"} ${"x".repeat(50)} 𝄞 end`;

describe("textSlices", () => {
  it.each([
    ["one chunk, slices of 1 byte", [], 1],
    ["one chunk, slices of 3 bytes", [], 3],
    ["chunks cut inside characters", [1, 2, 3, 5, 7, 11], 4],
    ["empty chunks between", [0, 5, 0, 0, 9], 8],
    ["slices larger than the text", [10], 1024],
  ])("%s", async (_label, cuts, sliceBytes) => {
    const parts = await readAll(streamOf(new TextEncoder().encode(TEXT), cuts), sliceBytes);
    expect(parts.join("")).toBe(TEXT);
    expect(parts.every((part) => part !== "" && new TextEncoder().encode(part).length <= sliceBytes + 3)).toBe(true);
  });

  it("hands on a character cut at the very end as U+FFFD, as TextDecoder does", async () => {
    const bytes = new TextEncoder().encode("ab😀").subarray(0, 4);
    expect((await readAll(streamOf(bytes, [3]), 2)).join("")).toBe("ab\uFFFD");
  });
});

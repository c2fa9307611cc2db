/**
 * Reading a byte reader (src/core/byte-reads.ts) to its end the way the gateway's readers
 * do: into one buffer that each read hands back.
 */
import type { ByteReader } from "../../src/core/byte-reads";

/** Reads `reader` to its end into a buffer of `bufferBytes`; resolves with the bytes read. */
export async function readToEnd(reader: ByteReader, bufferBytes: number): Promise<number> {
  let buffer = new Uint8Array(bufferBytes);
  let total = 0;
  for (;;) {
    const { done, value } = await reader.readInto(buffer);
    if (done || !value) return total;
    total += value.byteLength;
    buffer = new Uint8Array(value.buffer as ArrayBuffer);
  }
}

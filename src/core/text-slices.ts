/**
 * Reading a byte stream as text in small strings. `TextDecoderStream` turns each chunk
 * into one string, and a peer writing 1 MB at once makes strings past V8's large-object
 * threshold (~128 KB): those are freed only by a full collection, so a fast stream grew
 * the isolate by ~95 MB while nothing held them. Decoded a slice at a time, the strings
 * die young and are collected at once; and read into one buffer kept for the whole body,
 * the bytes cost no new ArrayBuffer per chunk (core/byte-reads.ts).
 */
import { byteReader } from "./byte-reads";

/** Bytes of the stream decoded into one string. */
export const TEXT_SLICE_BYTES = 32 * 1024;

/** What `textSlices` hands out: a reader of strings, as a `ReadableStreamDefaultReader<string>` is read. */
export type TextSliceReader = {
  read(): Promise<{ done: false; value: string } | { done: true; value?: undefined }>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
};

/**
 * Reads `body` as UTF-8 text, at most `sliceBytes` bytes per string (a character split
 * between slices or chunks is kept whole). Empty strings are never handed out. The bytes
 * are read into one buffer reused for the whole body (core/byte-reads.ts).
 */
export function textSlices(body: ReadableStream<Uint8Array>, sliceBytes = TEXT_SLICE_BYTES): TextSliceReader {
  const reader = byteReader(body);
  const decoder = new TextDecoder();
  let buffer = new Uint8Array(sliceBytes);
  let ended = false;
  return {
    async read() {
      while (!ended) {
        // The whole body is wanted: a full slice per read costs fewer reads than a read per chunk that came.
        const { done, value } = await reader.readInto(buffer, buffer.byteLength);
        if (done || !value) {
          ended = true;
          break;
        }
        buffer = new Uint8Array(value.buffer as ArrayBuffer);
        const text = decoder.decode(value, { stream: true });
        if (text !== "") return { done: false, value: text };
      }
      const rest = decoder.decode();
      return rest !== "" ? { done: false, value: rest } : { done: true };
    },
    cancel: (reason) => reader.cancel(reason),
    releaseLock: () => reader.releaseLock(),
  };
}

/**
 * Reading a byte stream as text in small strings. `TextDecoderStream` turns each chunk
 * into one string, and a peer writing 1 MB at once makes strings past V8's large-object
 * threshold (~128 KB): those are freed only by a full collection, so a fast stream grew
 * the isolate by ~95 MB while nothing held them. Decoded a slice at a time, the strings
 * die young and are collected at once.
 */

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
 * between slices or chunks is kept whole). Empty strings are never handed out.
 */
export function textSlices(body: ReadableStream<Uint8Array>, sliceBytes = TEXT_SLICE_BYTES): TextSliceReader {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let chunk: Uint8Array | undefined;
  let at = 0;
  let ended = false;
  return {
    async read() {
      for (;;) {
        if (chunk && at < chunk.length) {
          const text = decoder.decode(chunk.subarray(at, at + sliceBytes), { stream: true });
          at += sliceBytes;
          if (text !== "") return { done: false, value: text };
          continue;
        }
        if (ended) return { done: true };
        const next = await reader.read();
        if (next.done) {
          ended = true;
          chunk = undefined;
          const rest = decoder.decode();
          if (rest !== "") return { done: false, value: rest };
          return { done: true };
        }
        chunk = next.value;
        at = 0;
      }
    },
    cancel: (reason) => reader.cancel(reason),
    releaseLock: () => reader.releaseLock(),
  };
}

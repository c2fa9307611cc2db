/**
 * Bytes held as the pieces they were read in (a large answer's blocks, an SSE line read
 * across buffers), never joined unless something needs one array: their length, their
 * text decoded piece by piece, and their bytes handed to the runtime as views.
 */

/** The most of held bytes handed to the runtime in one piece (`writeSlices`). */
export const WRITE_PIECE_BYTES = 1024 * 1024;

/** The number of bytes in `pieces`. */
export function piecesLength(pieces: readonly Uint8Array[]): number {
  let length = 0;
  for (const piece of pieces) length += piece.byteLength;
  return length;
}

/** `pieces` as one array: the piece itself when there is one, else a copy (`length` bytes, counted when not given). */
export function joinPieces(pieces: readonly Uint8Array[], length = piecesLength(pieces)): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const all = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    all.set(piece, at);
    at += piece.byteLength;
  }
  return all;
}

/** The UTF-8 text of `pieces`, decoded piece by piece into one string (the pieces are never joined for it). */
export function piecesText(pieces: readonly Uint8Array[], options?: { ignoreBOM?: boolean }): string {
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: options?.ignoreBOM ?? false });
  if (pieces.length === 1) return decoder.decode(pieces[0]);
  let text = "";
  for (const piece of pieces) text += decoder.decode(piece, { stream: true });
  return text + decoder.decode();
}

/**
 * `pieces` as views of at most WRITE_PIECE_BYTES each, none copied: what is handed to the
 * runtime to write. workerd copies a Response's array body whole before it writes a byte
 * of it, where it writes a stream's pieces as they come: a 10 MiB body written as one array
 * took 210-550 ms to reach a client on loopback, as pieces 125-245 ms (docs/benchmarks.md,
 * issue 38).
 */
export function* writeSlices(pieces: readonly Uint8Array[]): Generator<Uint8Array> {
  for (const piece of pieces)
    for (let at = 0; at < piece.byteLength; at += WRITE_PIECE_BYTES) yield piece.subarray(at, at + WRITE_PIECE_BYTES);
}

/** `pieces` as a stream of their `writeSlices`, pulled one at a time (a Response's body). */
export function piecesStream(pieces: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  const slices = writeSlices(pieces);
  return new ReadableStream(
    {
      pull(controller) {
        const next = slices.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The Worker's inspector, as the benches use it: a DevTools (CDP) session over wrangler
 * dev's inspector proxy (`--inspector-port`), for CPU profiles (bench/profile-call.mjs)
 * and for the isolate's own memory (bench/slow-client.mjs), which workerd's resident
 * memory does not tell apart from the runtime's buffers.
 */

/** One CDP session: `send(method, params)` resolves with the method's result. */
export type InspectorSession = {
  readonly send: (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Calls `listener` with the params of every event `method` (HeapProfiler.addHeapSnapshotChunk). */
  readonly on: (method: string, listener: (params: Record<string, unknown>) => void) => void;
  readonly close: () => void;
};

/** Opens a session on the first Worker wrangler dev's inspector proxy on `port` lists. */
export async function inspect(port: number): Promise<InspectorSession> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl?: string }[];
  const target = targets.find((t) => t.webSocketDebuggerUrl) ?? targets[0];
  if (!target?.webSocketDebuggerUrl) throw new Error(`inspector: no Worker listed on port ${port}`);
  // wrangler's inspector proxy takes connections from DevTools' origins and localhost only.
  const ws = new WebSocket(target.webSocketDebuggerUrl, {
    headers: { origin: "http://localhost" },
  } as unknown as string[]);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener(
      "error",
      (event) => reject(new Error(`inspector: ${(event as ErrorEvent).message ?? "connection failed"}`)),
      { once: true },
    );
  });
  let next = 1;
  const pending = new Map<
    number,
    { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void }
  >();
  const listeners = new Map<string, ((params: Record<string, unknown>) => void)[]>();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      method?: string;
      params?: Record<string, unknown>;
      result?: Record<string, unknown>;
      error?: { message: string };
    };
    if (message.method !== undefined)
      for (const listener of listeners.get(message.method) ?? []) listener(message.params ?? {});
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id!);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result ?? {});
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    on: (method, listener) => listeners.set(method, [...(listeners.get(method) ?? []), listener]),
    close: () => ws.close(),
  };
}

/**
 * The isolate's memory in bytes, as V8 counts it against the Worker's 128 MB: its JavaScript
 * heap in use, the runtime's objects on V8's C++ heap, and the backing stores of its
 * ArrayBuffers (chunks of bodies read or written from JavaScript). Garbage not yet
 * collected counts too: this is what the isolate holds, not what it would keep after a GC.
 */
export async function isolateBytes(session: InspectorSession): Promise<number> {
  const usage = await session.send("Runtime.getHeapUsage");
  const count = (name: string) => (typeof usage[name] === "number" ? (usage[name] as number) : 0);
  return count("usedSize") + count("embedderHeapUsedSize") + count("backingStorageSize");
}

/** Samples `isolateBytes` every `intervalMs` until the returned function is called; it resolves with the peak. */
export function sampleIsolate(session: InspectorSession, intervalMs: number): () => Promise<number> {
  let peak = 0;
  let inFlight: Promise<void> = Promise.resolve();
  const take = () =>
    (inFlight = isolateBytes(session).then(
      (bytes) => {
        peak = Math.max(peak, bytes);
      },
      () => undefined,
    ));
  void take();
  const timer = setInterval(() => void take(), intervalMs);
  return async () => {
    clearInterval(timer);
    await inFlight;
    await take();
    return peak;
  };
}

/**
 * The JavaScript heap in use after collections forced through the inspector (bytes): what
 * the isolate keeps, garbage left out. workerd's inspector never answers
 * HeapProfiler.collectGarbage (seen on 2026-11-29 with wrangler 4.156: the call stays
 * pending, idle or busy), but V8 collects all it can before it takes a heap snapshot; so a
 * snapshot is taken, `rounds` times (one collection can leave what finalizers or weak
 * references free only at the next), and dropped.
 */
export async function heapAfterGc(session: InspectorSession, rounds = 2): Promise<number> {
  for (let i = 0; i < rounds; i++) await heapSnapshot(session, false);
  const usage = await session.send("Runtime.getHeapUsage");
  return typeof usage.usedSize === "number" ? usage.usedSize : Number.NaN;
}

let snapshotChunks: string[] | undefined;
const listening = new WeakSet<InspectorSession>();

/** A heap snapshot (the .heapsnapshot JSON DevTools opens; "" when not `kept`), taken after V8's full collection. */
export async function heapSnapshot(session: InspectorSession, kept = true): Promise<string> {
  if (!listening.has(session)) {
    listening.add(session);
    session.on("HeapProfiler.addHeapSnapshotChunk", (params) => snapshotChunks?.push(String(params.chunk)));
    await session.send("HeapProfiler.enable");
  }
  snapshotChunks = kept ? [] : undefined;
  try {
    await session.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    return snapshotChunks?.join("") ?? "";
  } finally {
    snapshotChunks = undefined;
  }
}

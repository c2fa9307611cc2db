/**
 * The Worker's inspector, as the benches use it: a DevTools (CDP) session over wrangler
 * dev's inspector proxy (`--inspector-port`), for CPU profiles (bench/profile-call.mjs)
 * and for the isolate's own memory (bench/slow-client.mjs), which workerd's resident
 * memory does not tell apart from the runtime's buffers.
 */

/** One CDP session: `send(method, params)` resolves with the method's result. */
export type InspectorSession = {
  readonly send: (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>;
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
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: Record<string, unknown>;
      error?: { message: string };
    };
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

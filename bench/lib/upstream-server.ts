/**
 * Entry point of one upstream child process of the benchmark:
 *
 *   node bench/lib/upstream-server.ts raw|beta|dual|lists
 *
 * Serves the test fixture on 127.0.0.1 (raw: test/fixtures/raw-upstream.ts, the cheapest
 * upstream; beta: the stateless SDK server of test/fixtures/sdk-upstream.ts; dual: the
 * SDK v2 server of test/fixtures/conformance-upstream-2026.ts, 2026-07-28 and 2025; lists:
 * test/fixtures/list-cache-upstream.ts, which counts the list requests reaching it, its URL
 * the origin), prints
 * `READY <url>`, and exits on SIGTERM or when its stdin closes (the benchmark is gone).
 * A process of its own so the upstream neither shares an event loop with the load
 * generator nor hides in its CPU time.
 */
import { startRawUpstream } from "../../test/fixtures/raw-upstream.ts";
import { startBeta } from "../../test/fixtures/sdk-upstream.ts";
import { startConformanceUpstream2026 } from "../../test/fixtures/conformance-upstream-2026.ts";
import { startListCacheUpstream } from "../../test/fixtures/list-cache-upstream.ts";

export type UpstreamKind = "raw" | "beta" | "dual" | "lists";

export function isUpstreamKind(value: unknown): value is UpstreamKind {
  return value === "raw" || value === "beta" || value === "dual" || value === "lists";
}

async function start(kind: UpstreamKind): Promise<{ url: string; close: () => Promise<void> }> {
  switch (kind) {
    case "raw":
      return startRawUpstream();
    case "beta":
      return startBeta();
    case "dual":
      return startConformanceUpstream2026();
    case "lists": {
      const served = await startListCacheUpstream();
      return { url: served.origin, close: served.close };
    }
  }
}

async function main(kind: string | undefined): Promise<void> {
  if (!isUpstreamKind(kind)) {
    console.error("usage: node bench/lib/upstream-server.ts raw|beta|dual|lists");
    process.exit(2);
  }
  const server = await start(kind);
  const shutdown = () => void server.close().then(() => process.exit(0));
  process.once("SIGTERM", shutdown);
  process.stdin.on("end", shutdown).resume();
  console.log(`READY ${server.url}`);
}

if (import.meta.main) await main(process.argv[2]);

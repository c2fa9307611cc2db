/**
 * Entry point of one upstream child process of the benchmark:
 *
 *   node bench/lib/upstream-server.ts raw|beta
 *
 * Serves the test fixture on 127.0.0.1 (raw: test/fixtures/raw-upstream.ts, the cheapest
 * upstream; beta: the stateless SDK server of test/fixtures/sdk-upstream.ts), prints
 * `READY <url>`, and exits on SIGTERM or when its stdin closes (the benchmark is gone).
 * A process of its own so the upstream neither shares an event loop with the load
 * generator nor hides in its CPU time.
 */
import { startRawUpstream } from "../../test/fixtures/raw-upstream.ts";
import { startBeta } from "../../test/fixtures/sdk-upstream.ts";

export type UpstreamKind = "raw" | "beta";

export function isUpstreamKind(value: unknown): value is UpstreamKind {
  return value === "raw" || value === "beta";
}

async function main(kind: string | undefined): Promise<void> {
  if (!isUpstreamKind(kind)) {
    console.error("usage: node bench/lib/upstream-server.ts raw|beta");
    process.exit(2);
  }
  const server = kind === "raw" ? await startRawUpstream() : await startBeta();
  const shutdown = () => void server.close().then(() => process.exit(0));
  process.once("SIGTERM", shutdown);
  process.stdin.on("end", shutdown).resume();
  console.log(`READY ${server.url}`);
}

if (import.meta.main) await main(process.argv[2]);

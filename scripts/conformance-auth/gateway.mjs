/**
 * The gateway for one conformance authorization scenario: the Worker as `wrangler deploy`
 * builds it (`--dry-run --outdir`, built once per run by ./leg.mjs), run in workerd by
 * Miniflare with the bindings wrangler.toml declares (scripts/lib/worker-options.mjs), on
 * a loopback port of its own. Each scenario's upstream URL is known only once the scenario
 * started (the conformance CLI passes it to ./client.mjs), and upstreams are configuration
 * (`UPSTREAMS`), so each scenario gets its own gateway: a Miniflare from the built modules
 * starts in about a second, where `wrangler dev` would build the Worker again each time.
 *
 *   const gateway = await startGateway(bundleDir, { UPSTREAMS: JSON.stringify([...]) });
 *   try { await fetch(`${gateway.url}/mcp/<name>`, ...); } finally { await gateway.stop(); }
 */
import { randomBytes } from "node:crypto";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { bundleModules } from "../lib/bundle-modules.mjs";
import { gatewayWorkerOptions } from "../lib/worker-options.mjs";

/** Where the gateway listens: loopback only, on a port the kernel picks. */
const HOST = "127.0.0.1";

/**
 * Starts the gateway built into `bundleDir` with `bindings` (vars and secrets, as strings)
 * beside a fresh `SESSION_SECRET`, authentication off and in-memory storage.
 * @param {string} bundleDir a `wrangler deploy --dry-run --outdir` directory
 * @param {Record<string, string>} bindings
 * @returns {Promise<{ url: string, stop: () => Promise<void> }>} `stop` may be called more than once
 */
export async function startGateway(bundleDir, bindings) {
  const { modules } = bundleModules(bundleDir);
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: HOST,
      port: 0,
      // No request for Cloudflare's `request.cf` data: everything stays on loopback.
      cf: false,
      // The gateway's own warnings (a refused callback names its reason) go to stderr, which
      // the conformance CLI keeps beside the scenario's checks.
      log: new Log(LogLevel.WARN),
      workers: [
        {
          name: "gateway",
          ...gatewayWorkerOptions(),
          modules: modules.map(({ type, path }) => ({ type, path })),
          modulesRoot: bundleDir,
          bindings: { SESSION_SECRET: randomBytes(32).toString("hex"), AUTH: '{"mode":"off"}', ...bindings },
        },
      ],
    }),
  );
  const url = await mf.ready;
  let stopping;
  return { url: url.origin, stop: () => (stopping ??= mf.dispose()) };
}

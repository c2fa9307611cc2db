// Two projects. "workers": tests that run inside workerd through Cloudflare's vitest
// integration, with the real KV, R2 and Queue bindings declared in wrangler.toml and real
// SDK upstreams on loopback (started by test/global-setup.ts, their URLs reaching the
// Worker's bindings through `inject`). "e2e": Node tests where the SDK's Client talks
// over HTTP to the gateway started the way README says (`npm start`).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { fetch as miniflareFetch, type Request as MiniflareRequest } from "miniflare";
import type { Logger, Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { isolatedWranglerConfig } from "./test/helpers/node/isolated-wrangler-config.ts";

/**
 * Drops Vite's warning that the SDK's published sourcemaps point at sources the package
 * does not ship: it is about node_modules, not this project, and reads like a failure.
 */
function quietSdkSourcemaps(): Plugin {
  const quiet = (logger: Logger) => {
    const warnOnce = logger.warnOnce.bind(logger);
    logger.warnOnce = (message, options) => {
      if (!message.includes("points to missing source files")) warnOnce(message, options);
    };
  };
  return {
    name: "quiet-sdk-sourcemaps",
    configResolved: (config) => quiet(config.logger),
    configureServer: (server) => Object.values(server.environments).forEach((environment) => quiet(environment.logger)),
  };
}

// The yaml package as a module of its own (src/storage/yaml-module.mjs), which the Worker
// imports on its first YAML document, is generated: wrangler's custom build makes it for
// deploys and `wrangler dev`, but this integration runs no custom build, so it is made here.
execFileSync(process.execPath, [fileURLToPath(new URL("./scripts/build-yaml-module.mjs", import.meta.url).href)], {
  stdio: ["ignore", "ignore", "inherit"],
});

// The workers tests read wrangler.toml through a copy in a directory of its own: wrangler
// would add the `.dev.vars` (or `.env`) beside wrangler.toml to the bindings, and tests never
// depend on a developer's local files (test/e2e/test-config.test.ts).
// The directory is named after this checkout, so checkouts sharing a node_modules never read each other's copy.
const ROOT = fileURLToPath(new URL(".", import.meta.url).href);
const CHECKOUT = createHash("sha256").update(ROOT).digest("hex").slice(0, 12);
const WORKERS_TEST_CONFIG = isolatedWranglerConfig(
  `${ROOT}wrangler.toml`,
  `${ROOT}node_modules/.cache/mcp-edge-gateway/workers-test-${CHECKOUT}`,
);

export default defineConfig({
  plugins: [quietSdkSourcemaps()],
  // The console's pages use the classic JSX transform (src/admin/console/jsx.ts); its
  // development mode would add `__source` and `__self` props, which Hono renders as
  // attributes. Tests render what a deploy renders.
  oxc: { jsx: { development: false } },
  test: {
    // Logs of Node tests (e2e) are shown for a failing test, not for passing ones.
    silent: "passed-only",
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            main: "./src/index.ts",
            // workerd's own diagnostics (it reports every refused connection to a "down"
            // upstream as an uncaught exception, even when the gateway catches it) stay out of
            // the test output; failures are reported by the tests themselves.
            verbose: false,
            wrangler: { configPath: WORKERS_TEST_CONFIG },
            miniflare: {
              bindings: {
                UPSTREAMS: JSON.stringify(inject<unknown[]>("upstreams")),
                SESSION_SECRET: "test-session-secret-0123456789abcdef",
                // Authentication off for the tests of everything else; the tests of test/auth/,
                // test/personas/ and test/api-keys/ turn it on per request.
                AUTH: '{"mode":"off"}',
              },
              // A limit tight enough to reach in a test (test/personas/auth-rate-limits.test.ts); wrangler.toml declares the real ones.
              ratelimits: { RATE_LIMIT_TEST: { namespace_id: "9001", simple: { limit: 3, period: 60 } } },
              serviceBindings: {
                // The demo upstream is a separate Worker; these tests use SDK upstreams on loopback.
                DEMO_UPSTREAM: () => new Response("demo upstream not started in tests", { status: 503 }),
                // A service binding whose Worker forwards to the raw upstream: an upstream reached by binding.
                RAW_SERVICE: async (request: MiniflareRequest) =>
                  miniflareFetch(inject<{ raw: string }>("fixtureUrls").raw, {
                    method: request.method,
                    headers: request.headers,
                    body: await request.text(),
                  }),
                // A Worker upstream whose answer streams past the length its headers declare (test/upstream/upstream-lying-length.test.ts).
                LYING_LENGTH_SERVICE: "lying-length-upstream",
              },
              workers: [
                {
                  name: "lying-length-upstream",
                  modules: true,
                  compatibilityDate: "2026-11-01",
                  scriptPath: "./test/fixtures/lying-length-worker.js",
                },
              ],
            },
          })),
        ],
        test: {
          name: "workers",
          globalSetup: ["./test/global-setup.ts"],
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**"],
          testTimeout: 20_000,
          // One runtime for all files (per vitest worker), not one per file: each file used
          // to start its own workerd and evaluate the Worker's modules again, about 2 s of
          // the suite's time per file on 2 cores (docs/development.md, "The workers suite's
          // time"). Files therefore share KV, R2 and module state: a test names its own keys
          // (a marker per test) and counts only what it made, never "everything in KV".
          isolate: false,
        },
      },
      {
        test: {
          name: "e2e",
          environment: "node",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["./test/e2e/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Each file starts its own gateways; two at once is what a 2-core CI box takes.
          maxWorkers: 2,
          // After the workers project: vitest runs projects with different worker counts in
          // separate groups, and refuses two such projects in one group.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

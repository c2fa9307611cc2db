// Tests run inside workerd through Cloudflare's vitest integration, with the real KV,
// R2 and Queue bindings declared in wrangler.toml. Upstream MCP servers are real SDK
// servers started on loopback by test/global-setup.ts; their URLs reach the Worker's
// bindings through `inject`.
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { fetch as miniflareFetch, type Request as MiniflareRequest } from "miniflare";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      main: "./src/index.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          UPSTREAMS: JSON.stringify(inject<unknown[]>("upstreams")),
          SESSION_SECRET: "test-session-secret-0123456789abcdef",
        },
        serviceBindings: {
          // The demo upstream is a separate Worker; tests use SDK upstreams on loopback.
          DEMO_UPSTREAM: () => new Response("demo upstream not started in tests", { status: 503 }),
          // A service binding whose Worker forwards to the raw upstream: an upstream reached by binding.
          RAW_SERVICE: async (request: MiniflareRequest) =>
            miniflareFetch(inject<{ raw: string }>("fixtureUrls").raw, { method: request.method, headers: request.headers, body: await request.text() }),
        },
      },
    })),
  ],
  test: {
    globalSetup: ["./test/global-setup.ts"],
    include: ["test/**/*.test.ts"],
    exclude: ["test/e2e/**"],
    testTimeout: 20_000,
  },
});

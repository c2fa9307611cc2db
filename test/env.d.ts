// The bindings the tests' Worker has (wrangler.toml plus vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    GATEWAY_KV: KVNamespace;
    PAYLOADS: R2Bucket;
    AUDIT_QUEUE: Queue;
    UPSTREAMS: string;
    SESSION_SECRET: string;
  }
}

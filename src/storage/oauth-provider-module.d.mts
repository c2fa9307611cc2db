/**
 * The types of oauth-provider-module.mjs, which scripts/build-yaml-module.mjs generates (it
 * is not committed): Cloudflare's workers-oauth-provider bundled as a module of its own, so
 * the Worker loads it only when AUTH.signIn is on (oauth-library.ts).
 */
export * from "@cloudflare/workers-oauth-provider";

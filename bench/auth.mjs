#!/usr/bin/env node
/**
 * `npm run bench:auth`: what authentication adds to relaying a small tools/call. Starts
 * the raw upstream, a local JWKS (test/fixtures/jwks-server.ts), the pass-through Worker,
 * and four gateways (`npm start`, from a snapshot of the tree), one per target: AUTH off,
 * two with API keys and JWTs on (a persona allowing the tool; an API key made through
 * the admin API is sent to one, a JWT signed with the JWKS's key to the other), and one
 * with client sign-in on (AUTH.signIn, users logging in at oidc-provider on loopback), sent
 * the access token a client got through the whole flow (test/helpers/node/sign-in-gateway.ts):
 * what sign-in adds to a call once a token is held. Calls are interleaved round-robin after
 * a warm-up; the added median latency over calling the upstream directly is compared
 * with the pass-through's (target: <= 1.1x), with the key, the JWKS and the sign-in token cached.
 *
 *   npm run bench:auth
 *   npm run bench:auth -- --iterations 400 --warmup 50
 *   npm run bench:auth -- --gateway-dir ../other-checkout   # the gateways of another tree, for before/after pairs
 *
 * Results are printed and written to bench/results/auth-<timestamp>.json.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { importJWK, SignJWT } from "jose";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { startJwksServer } from "../test/fixtures/jwks-server.ts";
import { signInToken, startSignInGateway } from "../test/helpers/node/sign-in-gateway.ts";
import { interleavedLatency } from "./lib/load.ts";
import { startPassthrough } from "./lib/passthrough-process.ts";
import { hardLimit } from "./lib/hard-limit.ts";
import { integerOption, readOptions } from "./lib/options.ts";
import { section, table, saveResult } from "./lib/report.ts";
import { snapshotTree } from "./lib/snapshot.ts";
import { summarize } from "./lib/stats.ts";
import { openTarget } from "./lib/target.ts";
import { startUpstream } from "./lib/upstream-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Issue 18: added median latency at most 1.10x the pass-through's with the defaults on. */
const TARGET_RATIO = 1.1;
const HARD_LIMIT_MS = 10 * 60_000;
const ADMIN_TOKEN = randomBytes(16).toString("hex");
const ISSUER = "https://idp.bench.local";

const OPTIONS = {
  iterations: ["BENCH_ITERATIONS", "200"],
  warmup: ["BENCH_WARMUP", "30"],
  "gateway-dir": ["BENCH_GATEWAY_DIR", ROOT],
};

async function main() {
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const raw = readOptions(OPTIONS, process.argv.slice(2));
  const iterations = integerOption(raw, "iterations", 1);
  const warmup = integerOption(raw, "warmup", 0);
  const stops = [];
  const disarm = hardLimit("bench:auth", HARD_LIMIT_MS);
  try {
    const upstream = await startUpstream("raw");
    stops.push(upstream.stop);
    const jwks = await startJwksServer();
    stops.push(jwks.close);
    const snapshot = snapshotTree(path.resolve(raw["gateway-dir"]));
    stops.push(async () => snapshot.remove());
    const state = mkdtempSync(path.join(os.tmpdir(), "bench-auth-"));
    stops.push(async () => rmSync(state, { recursive: true, force: true }));
    // BENCH_GATEWAY_VARS adds vars to every gateway (e.g. '{"AUDIT":{"enabled":false}}' to see authentication's own cost).
    const extraVars = JSON.parse(process.env.BENCH_GATEWAY_VARS ?? "{}");
    const common = {
      ...extraVars,
      UPSTREAMS: [{ name: "raw", url: upstream.url }],
      SESSION_SECRET: randomBytes(32).toString("hex"),
      ADMIN_TOKEN,
    };
    const open = await startGateway({
      port: await freePort(),
      vars: { ...common, AUTH: { mode: "off" } },
      persistTo: path.join(state, "open"),
      cwd: snapshot.dir,
    });
    stops.push(open.stop);
    // One gateway per authenticated target: calls to a process that served the call before
    // run warmer, so two targets on one gateway were each faster than the AUTH-off one's
    // (seen: with AUTH off on both, the gateway with two targets measured 0.35-0.6 ms less).
    const guardedGateway = async (name) => {
      const port = await freePort();
      const auth = {
        apiKeys: true,
        jwt: { issuer: ISSUER, audience: `http://127.0.0.1:${port}/mcp`, jwksUrl: jwks.url, rolesClaim: "roles" },
      };
      const gateway = await startGateway({
        port,
        vars: { ...common, AUTH: auth },
        persistTo: path.join(state, name),
        cwd: snapshot.dir,
      });
      stops.push(gateway.stop);
      const admin = (method, route, body) =>
        fetch(`${gateway.url}/admin${route}`, {
          method,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      if ((await admin("PUT", "/personas/bench", { roles: ["bench"], allow: ["raw___*"] })).status !== 200)
        throw new Error("could not store the persona");
      return { ...gateway, auth, admin };
    };
    const forKey = await guardedGateway("key");
    const forJwt = await guardedGateway("jwt");
    const signIn = await startSignInGateway({
      adminToken: ADMIN_TOKEN,
      persistTo: path.join(state, "sign-in"),
      persona: { roles: ["gateway-users"], allow: ["raw___*"] },
      vars: common,
      cwd: snapshot.dir,
    });
    stops.push(signIn.stop);
    const signedIn = await signInToken(signIn.url, "bench-user", `${signIn.url}/mcp/raw`);
    const passthrough = await startPassthrough(await freePort(), upstream.url);
    stops.push(passthrough.stop);

    const { key } = await (
      await forKey.admin("POST", "/api-keys", { principal: "bench-key", roles: ["bench"] })
    ).json();
    const signing = jwks.keys.ec;
    const jwt = await new SignJWT({ roles: ["bench"] })
      .setProtectedHeader({ alg: "ES256", kid: signing.kid })
      .setIssuer(ISSUER)
      .setAudience(forJwt.auth.jwt.audience)
      .setSubject("bench-jwt")
      .setExpirationTime("1h")
      .sign(await importJWK(signing, "ES256"));

    const call = { upstream: "raw", tool: "trap", args: { n: 1 } };
    const targets = await Promise.all(
      [
        { name: "direct", via: "direct", url: upstream.url },
        { name: "pass-through", via: "passthrough", url: `${passthrough.url}/` },
        { name: "gateway, AUTH off", via: "gateway", url: `${open.url}/mcp/raw` },
        {
          name: "gateway, API key",
          via: "gateway",
          url: `${forKey.url}/mcp/raw`,
          headers: { authorization: `Bearer ${key}` },
        },
        {
          name: "gateway, JWT",
          via: "gateway",
          url: `${forJwt.url}/mcp/raw`,
          headers: { authorization: `Bearer ${jwt}` },
        },
        {
          name: "gateway, sign-in token",
          via: "gateway",
          url: `${signIn.url}/mcp/raw`,
          headers: { authorization: `Bearer ${signedIn.access_token}` },
        },
      ].map((spec) => openTarget({ ...call, ...spec })),
    );
    const started = new Date().toISOString();
    const samples = await interleavedLatency(targets, iterations, warmup);
    const latency = Object.fromEntries([...samples].map(([name, values]) => [name, summarize(values)]));
    const direct = latency["direct"].median;
    const floor = latency["pass-through"].median - direct;
    const added = targets
      .filter((t) => t.via === "gateway")
      .map((t) => ({
        target: t.name,
        addedMs: latency[t.name].median - direct,
        ratio: (latency[t.name].median - direct) / floor,
      }));
    const result = {
      startedAt: started,
      gateway: { dir: snapshot.source, commit: snapshot.commit },
      iterations,
      warmup,
      machine: { cpus: os.cpus().length, loadAvg: os.loadavg() },
      latency,
      passthroughAddedMs: floor,
      added,
    };
    console.log(
      [
        `mcp-edge-gateway auth benchmark, ${started}: raw upstream, small tools/call, ${iterations} interleaved rounds after ${warmup} warm-up; load average ${os
          .loadavg()
          .map((x) => x.toFixed(2))
          .join(" ")}`,
        `gateway: a copy of ${snapshot.source} taken at start (commit ${snapshot.commit.slice(0, 12)}${snapshot.changes.length ? ", with changes" : ""})`,
        section(
          "Latency, ms",
          table(
            ["target", "median", "p90", "p99", "n"],
            Object.entries(latency).map(([name, s]) => [name, s.median, s.p90, s.p99, s.n]),
          ),
        ),
        section(
          `Added median latency over direct, ms, and as a multiple of the pass-through's (target <= ${TARGET_RATIO})`,
          table(
            ["relay", "added ms", "x pass-through"],
            [
              ["pass-through", floor, "1 (the floor)"],
              ...added.map((a) => [
                a.target,
                a.addedMs,
                `${a.ratio.toFixed(2)}${a.ratio <= TARGET_RATIO ? "" : " (over target)"}`,
              ]),
            ],
          ),
        ),
      ].join("\n"),
    );
    saveResult(path.join(ROOT, "bench", "results"), "auth", result, started);
  } finally {
    disarm();
    for (const stop of stops.reverse())
      await stop().catch((error) => console.error(`[bench:auth] while stopping: ${error}`));
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`[bench:auth] ${error.stack ?? error}`);
    process.exit(1);
  },
);

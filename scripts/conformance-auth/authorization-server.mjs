/**
 * The `2026/authorization-server` leg of `npm run conformance` (scripts/conformance.mjs):
 * the suite's authorization server scenarios (`conformance authorization`: the metadata
 * endpoint, the authorization code grant) against the gateway with client sign-in on
 * (AUTH.signIn), started as README says (`npm start`, scripts/lib/gateway-process.mjs),
 * its users logging in at the operator's OpenID Connect provider of the tests
 * (test/fixtures/operator-idp.ts, a real oidc-provider on loopback).
 *
 * The suite acts as a public client the gateway registered (RFC 7591, redirect URI
 * `http://127.0.0.1:<port>/callback` on the suite's own callback server), prints the
 * authorization URL and waits for a browser: a scripted one here, which logs in at the
 * provider, presses Allow on the gateway's consent page and opens the redirect the gateway
 * answers, which is the suite's callback. The suite then exchanges the code and checks the
 * token response. ./expected-failures.mjs lists what may fail (none today), judged as the
 * `2026/auth` leg is: an unlisted failure or a listed check that passes fails the run.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, startGateway } from "../lib/gateway-process.mjs";
import { AUTHORIZATION_SERVER_EXPECTED_FAILURES } from "./expected-failures.mjs";

export const AUTHORIZATION_SERVER_LEG = "2026/authorization-server";
/** The person the scripted browser signs in as, at the provider (ada@example.test). */
const USER = "conformance-ada";
const ADMIN_TOKEN = "conformance-authorization-admin-token-0123456789";
/** How long the suite may take (it waits up to 5 minutes for a browser; ours comes in seconds). */
const CLI_TIMEOUT_MS = 120_000;
/** Redirects and forms one sign-in may take. */
const MAX_STEPS = 20;

/** A browser of one person: follows redirects with its own cookies, logs in, allows; stops at `stopAt`. */
async function signInAndAllow(url, stopAt) {
  const jar = new Map();
  let next = { href: url, init: {} };
  for (let step = 0; step < MAX_STEPS; step++) {
    const at = new URL(next.href);
    const cookie = [...(jar.get(at.host) ?? new Map())].map(([k, v]) => `${k}=${v}`).join("; ");
    const headers = { ...(cookie ? { cookie } : {}), ...next.init.headers };
    const response = await fetch(at, { ...next.init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq > 0)
        (jar.get(at.host) ?? jar.set(at.host, new Map()).get(at.host)).set(
          pair.slice(0, eq).trim(),
          pair.slice(eq + 1),
        );
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      const target = new URL(location, at).href;
      if (target.startsWith(stopAt)) return target;
      next = { href: target, init: {} };
      continue;
    }
    const page = await response.text();
    const form = /<form\b[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(page);
    if (response.status !== 200 || !form)
      throw new Error(`the sign-in stopped at ${at.origin}${at.pathname}: HTTP ${response.status}`);
    const fields = new URLSearchParams();
    for (const [input] of form[2].matchAll(/<input\b[^>]*>/gi)) {
      const name = /\bname="([^"]*)"/.exec(input)?.[1];
      if (name === "login") fields.set("login", USER);
      else if (name) fields.set(name, (/\bvalue="([^"]*)"/.exec(input)?.[1] ?? "").replaceAll("&amp;", "&"));
    }
    if (/name="decision" value="allow"/.test(form[2])) fields.set("decision", "allow");
    const form2 = { "content-type": "application/x-www-form-urlencoded", origin: at.origin };
    next = {
      href: new URL(form[1].replaceAll("&amp;", "&"), at).href,
      init: { method: "POST", body: fields.toString(), headers: form2 },
    };
  }
  throw new Error(`the sign-in took more than ${MAX_STEPS} steps`);
}

/** Runs `conformance authorization` against `origin`, answering its browser step; its output and exit code. */
function runSuite(cli, origin, clientId, port, out) {
  const args = [
    cli.path,
    "authorization",
    "--url",
    origin,
    "--client-id",
    clientId,
    "--resource",
    `${origin}/mcp`,
    "--port",
    String(port),
    "-o",
    out,
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let browsing;
  const onData = (chunk) => {
    output += chunk;
    const url = new RegExp(`^${origin.replace(/[.]/g, "\\.")}/oauth/authorize\\?\\S+$`, "m").exec(output)?.[0];
    if (url && !browsing) {
      const callback = `http://127.0.0.1:${port}/callback`;
      browsing = signInAndAllow(url, callback)
        .then((redirect) => fetch(redirect))
        .catch((error) => {
          output += `\n[browser] ${error.message}\n`;
        });
    }
  };
  child.stdout.setEncoding("utf8").on("data", onData);
  child.stderr.setEncoding("utf8").on("data", onData);
  const timer = setTimeout(() => child.kill("SIGKILL"), CLI_TIMEOUT_MS);
  return new Promise((resolve) =>
    child.once("exit", async (code) => {
      clearTimeout(timer);
      await browsing;
      resolve({ code, output });
    }),
  );
}

/** Every check the suite wrote under `dir` (its checks.json files). */
function checksUnder(dir) {
  const checks = [];
  for (const entry of readdirSync(dir, { recursive: true })) {
    if (path.basename(String(entry)) === "checks.json")
      checks.push(...JSON.parse(readFileSync(path.join(dir, String(entry)), "utf8")));
  }
  return checks;
}

/**
 * Runs the leg; resolves with the checks (id, status, message), the ones that fail the run
 * and the expected failures met, and the suite's output.
 */
export async function runAuthorizationServerLeg({ cli, out }) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const { startOperatorIdp, GATEWAY_CLIENT_ID, GATEWAY_CLIENT_SECRET } = await import(
    "../../test/fixtures/operator-idp.ts"
  );
  const idp = await startOperatorIdp([`${origin}/oauth/sign-in/callback`]);
  const state = mkdtempSync(path.join(os.tmpdir(), "conformance-authz-"));
  let gateway;
  try {
    const signIn = {
      issuer: idp.issuer,
      clientId: "SIGN_IN_CLIENT_ID",
      clientSecret: "SIGN_IN_CLIENT_SECRET",
      allowedDomains: ["example.test"],
    };
    const vars = {
      ADMIN_TOKEN,
      AUTH: { apiKeys: true, signIn },
      SIGN_IN_CLIENT_ID: GATEWAY_CLIENT_ID,
      SIGN_IN_CLIENT_SECRET: GATEWAY_CLIENT_SECRET,
    };
    gateway = await startGateway({ port, vars, persistTo: state });
    const callbackPort = await freePort();
    const registration = {
      client_name: "MCP conformance suite",
      redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
    const registered = await fetch(`${origin}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(registration),
    });
    if (registered.status !== 201) throw new Error(`registering the suite's client: HTTP ${registered.status}`);
    const { client_id: clientId } = await registered.json();
    const dir = path.join(out, AUTHORIZATION_SERVER_LEG);
    rmSync(dir, { recursive: true, force: true });
    const { code, output } = await runSuite(cli, origin, clientId, callbackPort, dir);
    const checks = checksUnder(dir).map((c) => ({ id: c.id, status: c.status, message: c.errorMessage }));
    return { code, output, checks, ...judgeChecks(checks) };
  } finally {
    await gateway?.stop();
    await idp.close();
    rmSync(state, { recursive: true, force: true });
  }
}

/** Checks judged against `listed` (check id → reason; warnings count as failures). */
export function judgeChecks(checks, listed = AUTHORIZATION_SERVER_EXPECTED_FAILURES) {
  const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  return {
    unexpected: bad.filter((c) => !(c.id in listed)),
    expected: bad.filter((c) => c.id in listed).map((c) => ({ ...c, reason: listed[c.id] })),
    stale: Object.keys(listed).filter((id) => !bad.some((c) => c.id === id)),
  };
}

/** Prints the leg's outcome; returns the lines that make the run fail (empty when it may pass). */
export function reportAuthorizationServerLeg(result) {
  for (const c of result.checks) console.log(`  ${c.id.padEnd(40)} ${c.status}${c.message ? `: ${c.message}` : ""}`);
  const passed = result.checks.filter((c) => c.status === "SUCCESS").length;
  console.log(`\n${AUTHORIZATION_SERVER_LEG}: checks ${passed}/${result.checks.length} passed`);
  for (const c of result.expected) console.log(`  expected failure ${c.id}: ${c.reason}`);
  const failing = [
    ...(result.checks.length === 0
      ? [`the suite wrote no checks (exit ${result.code}):\n${result.output.slice(-2000)}`]
      : []),
    ...result.unexpected.map((c) => `${c.id}: ${c.status}: ${c.message ?? ""}`),
    ...result.stale.map(
      (id) =>
        `${id} is listed as an expected failure but passes: remove it from scripts/conformance-auth/expected-failures.mjs`,
    ),
  ];
  if (failing.length > 0)
    console.log(`\n${AUTHORIZATION_SERVER_LEG}: FAILED — ${failing.length}:\n  ${failing.join("\n  ")}`);
  return failing;
}

#!/usr/bin/env node
/**
 * The "client" the MCP conformance suite's authorization scenarios test, where the OAuth
 * client under test is the gateway: `conformance client --command "node <this file>"`
 * starts a scenario (an MCP server and its authorization server(s) on loopback) and runs
 * this with the server's URL as last argument. This starts a gateway whose one upstream is
 * that server with `auth: {type: "oauth"}` (./gateway.mjs), and plays its user and MCP client:
 *
 *   1. an MCP client (SDK v1, declaring URL-mode elicitation) on `/mcp/<upstream>`
 *      initializes, lists the tools and calls the scenario's tool;
 *   2. whenever the gateway asks to sign in (the -32042 URL-elicitation-required error, or
 *      an `elicitation/create` in URL mode during a call), the user opens the link it
 *      gives and follows where the gateway and the authorization server send the browser
 *      (./sign-in.mjs): the scenarios' authorization servers approve at once;
 *   3. the request that was refused is sent again (at most MAX_RETRIES_PER_REQUEST times,
 *      as a person would retry), so the gateway reaches the upstream with its token.
 *
 * What the gateway sent is judged by the scenario; this exits 0 when the tool call
 * succeeded, 1 otherwise (some scenarios expect the client to give up: they allow it).
 * `MCP_CONFORMANCE_CONTEXT` carries a pre-registered client (auth/pre-registration):
 * configured as an operator would, `auth.clientId` and the secret's name in `auth.clientSecret`.
 */
import { fstatSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { signIn } from "./sign-in.mjs";

/** The gateway's name for the scenario's server. */
const UPSTREAM = "scenario";
/** The Worker secret holding a pre-registered client's secret (its name goes in the configuration). */
const CLIENT_SECRET_BINDING = "SCENARIO_CLIENT_SECRET";
/** MCP's "URL elicitation required" (2025-11-25): the gateway's answer when a user must sign in. */
const URL_ELICITATION_REQUIRED = -32042;
/** How often one request is sent again after its user signed in (a sign-in, then a step-up). */
const MAX_RETRIES_PER_REQUEST = 2;
/** The tool every authorization scenario's server has. */
const SCENARIO_TOOL = "test-tool";

const log = (line) => console.error(`[conformance-auth +${Math.round(performance.now())} ms] ${line}`);
/** Stops the gateway once started (on exit, or when the CLI stops this). */
let stopGateway = async () => {};

/** The upstream's `auth`, with a pre-registered client when the scenario gives one. */
function upstreamAuth(context) {
  if (typeof context.client_id !== "string") return { auth: { type: "oauth" }, secrets: {} };
  const secret = typeof context.client_secret === "string" ? context.client_secret : undefined;
  return {
    auth: { type: "oauth", clientId: context.client_id, ...(secret ? { clientSecret: CLIENT_SECRET_BINDING } : {}) },
    secrets: secret ? { [CLIENT_SECRET_BINDING]: secret } : {},
  };
}

/** The sign-in links of a -32042 error, if `error` is one. */
function signInLinks(error) {
  if (!(error instanceof McpError) || error.code !== URL_ELICITATION_REQUIRED) return undefined;
  const elicitations = error.data?.elicitations;
  return Array.isArray(elicitations) ? elicitations.map((e) => e?.url).filter((url) => typeof url === "string") : [];
}

/** Runs `request`; when the gateway answers that the user must sign in, signs in and sends it again. */
async function withSignIn(what, request) {
  for (let retry = 0; ; retry++) {
    try {
      return await request();
    } catch (error) {
      const links = signInLinks(error);
      if (!links || links.length === 0 || retry >= MAX_RETRIES_PER_REQUEST) throw error;
      log(`${what}: asked to sign in (${error.message})`);
      for (const link of links) await signIn(link, log);
    }
  }
}

/** A connected MCP client of the gateway's `/mcp/<upstream>`, answering URL elicitations by signing in. */
async function connect(gatewayUrl, pending) {
  const capabilities = { elicitation: { url: {} } };
  const client = new Client({ name: "conformance-auth-user", version: "1.0.0" }, { capabilities });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    if (request.params.mode !== "url") return { action: "decline" };
    log(`asked by elicitation/create to open ${new URL(request.params.url).pathname}`);
    // As a client does: accept (the gateway then waits for the sign-in), and open the link.
    pending.push(signIn(request.params.url, log));
    return { action: "accept" };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp/${UPSTREAM}`)));
  return client;
}

async function main() {
  const serverUrl = process.argv.at(-1);
  if (!serverUrl || !URL.canParse(serverUrl)) throw new Error(`usage: client.mjs <server URL>; got ${serverUrl}`);
  const bundleDir = process.env.CONFORMANCE_AUTH_BUNDLE;
  if (!bundleDir) throw new Error("CONFORMANCE_AUTH_BUNDLE (a `wrangler deploy --dry-run --outdir`) is not set");
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
  const { auth, secrets } = upstreamAuth(context);
  // Imported here, once the handlers below listen: loading Miniflare takes a while.
  const { startGateway } = await import("./gateway.mjs");
  const upstreams = [{ name: UPSTREAM, url: serverUrl, auth }];
  const gateway = await startGateway(bundleDir, { UPSTREAMS: JSON.stringify(upstreams), ...secrets });
  stopGateway = gateway.stop;
  log(`gateway on ${gateway.url}, upstream ${serverUrl} with ${JSON.stringify(auth)}`);
  const pending = [];
  let client;
  try {
    client = await withSignIn("initialize", () => connect(gateway.url, pending));
    const { tools } = await withSignIn("tools/list", () => client.listTools());
    log(`tools: ${tools.map((t) => t.name).join(", ")}`);
    const result = await withSignIn("tools/call", () => client.callTool({ name: SCENARIO_TOOL, arguments: {} }));
    await Promise.all(pending);
    if (result.isError) throw new Error(`the tool call failed: ${JSON.stringify(result.content)}`);
    log(`tools/call answered: ${JSON.stringify(result.content)}`);
  } finally {
    await client?.close().catch(() => {});
    await stopGateway();
  }
}

/** Ends this client and its gateway when the scenario is over without it. */
function abandon(why) {
  log(`stopped: ${why}`);
  void stopGateway().finally(() => process.exit(1));
}
// The CLI stops a client that runs out of time with SIGTERM; killed itself, it closes the
// pipe it gave this process as stdin. Either way the gateway goes too.
process.once("SIGTERM", () => abandon("the scenario ran out of time (SIGTERM)"));
if (fstatSync(0).isFIFO()) process.stdin.once("end", () => abandon("the conformance CLI went away")).resume();

main().then(
  () => process.exit(0),
  (error) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);

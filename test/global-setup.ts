/// <reference path="./provided-context.d.ts" />
/**
 * Starts the upstream MCP servers the Worker tests talk to (real servers on loopback)
 * and hands their URLs to the Worker's bindings and to the tests through `provide`.
 */
import type { TestProject } from "vitest/node";
import { startFloodUpstream } from "./fixtures/flood-upstream.ts";
import { startFaultyUpstream } from "./fixtures/faulty-upstream.ts";
import { startScriptUpstream } from "./fixtures/script-upstream.ts";
import { startRawUpstream } from "./fixtures/raw-upstream.ts";
import { startNamesUpstream } from "./fixtures/names-upstream.ts";
import { startAlpha, startBeta } from "./fixtures/sdk-upstream.ts";
import { startTasksUpstream } from "./fixtures/tasks-upstream.ts";
import { startTraceUpstream } from "./fixtures/trace-upstream.ts";
import { startJwksServer } from "./fixtures/jwks-server.ts";
import { startGuardWebhook } from "./fixtures/guard-webhook.ts";
import { startModernUpstream } from "./fixtures/modern-upstream.ts";
import { startMrtrUpstream } from "./fixtures/mrtr-upstream.ts";
import { startConformanceUpstream2026 } from "./fixtures/conformance-upstream-2026.ts";
import { startPinsUpstream } from "./fixtures/pins-upstream.ts";
import { startFastMcpUpstream } from "./fixtures/fastmcp-upstream.ts";
import { startEverythingUpstream } from "./fixtures/everything-upstream.ts";
import { startGetStreamUpstream } from "./fixtures/get-stream-upstream.ts";
import { startListCacheUpstream } from "./fixtures/list-cache-upstream.ts";
import { startDualEraUpstream } from "./fixtures/dual-era-upstream.ts";
import { startOAuthUpstream, STATIC_CLIENT_ID, STATIC_CLIENT_SECRET } from "./fixtures/oauth-upstream.ts";
import {
  GATEWAY_CALLBACK,
  GATEWAY_CLIENT_ID,
  GATEWAY_CLIENT_SECRET,
  startOperatorIdp,
} from "./fixtures/operator-idp.ts";
import {
  EXCHANGE_CLIENT_ID,
  EXCHANGE_CLIENT_SECRET,
  startUserCredentialsUpstream,
} from "./fixtures/user-credentials-upstream.ts";
import { GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, startGithubIdp } from "./fixtures/github-idp.ts";
import { startClientMetadataServer } from "./fixtures/client-metadata-server.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [alpha, beta, raw, names] = await Promise.all([
    startAlpha(),
    startBeta(),
    startRawUpstream(),
    startNamesUpstream(),
  ]);
  project.provide("namesUpstream", names.url);
  project.provide("fixtureUrls", { alpha: alpha.url, beta: beta.url, raw: raw.url });
  project.provide("upstreams", [
    { name: "alpha", url: alpha.url },
    { name: "beta", url: beta.url },
    { name: "raw", url: raw.url },
  ]);
  const flood = await startFloodUpstream();
  project.provide("floodUrl", flood.url);
  const faulty = await startFaultyUpstream();
  project.provide("faultyUpstreamUrl", faulty.url);
  // Answers a call with the SSE bytes a test stored (test/relay/relay-bytes.test.ts).
  const script = await startScriptUpstream();
  project.provide("scriptUpstream", script.origin);
  const tasks = await startTasksUpstream();
  project.provide("tasksUpstreamUrl", tasks.url);
  const trace = await startTraceUpstream();
  project.provide("traceUpstreamUrl", trace.url);
  const jwks = await startJwksServer();
  project.provide("jwks", { url: jwks.url, fetchesUrl: jwks.fetchesUrl, idpUrl: jwks.idpUrl, keys: jwks.keys });
  // The 2026-07-28-only upstream ("modern"): tests name it in their own UPSTREAMS, so /mcp of every other test is unchanged.
  const modern = await startModernUpstream();
  project.provide("modernUpstreamUrl", modern.url);
  const mrtr = await startMrtrUpstream();
  project.provide("mrtrUpstreamUrl", mrtr.url);
  const dualEra = await startConformanceUpstream2026();
  project.provide("dualEraUpstreamUrl", dualEra.url);
  // Sessionful 2025 and stateless 2026-07-28 on one URL (the 2026 side answers NDJSON): test/eras/dual-era.test.ts.
  const sessionfulDual = await startDualEraUpstream();
  project.provide("sessionfulDualUpstream", { url: sessionfulDual.url, origin: sessionfulDual.origin });
  // Changes its definitions between calls (tool pinning): tests name it in their own UPSTREAMS.
  const pins = await startPinsUpstream();
  project.provide("pinsUpstreamUrl", pins.url);
  // Real 2025 servers that ask their questions on the session's GET stream (test/eras/bridge-get-stream.test.ts).
  const [fastmcp, everything, getStream] = await Promise.all([
    startFastMcpUpstream(),
    startEverythingUpstream(),
    startGetStreamUpstream(),
  ]);
  project.provide("fastmcpUpstreamUrl", fastmcp.url);
  project.provide("everythingUpstreamUrl", everything.url);
  project.provide("getStreamUpstream", { url: getStream.url, origin: getStream.origin });
  // Counts the list requests reaching it, per tag (test/upstream/list-cache.test.ts).
  const listCache = await startListCacheUpstream();
  project.provide("listCacheUpstream", listCache.origin);
  // An operator's guardrail webhook answering scripted verdicts (test/guardrails/guardrails-checks.test.ts).
  const guardWebhook = await startGuardWebhook();
  project.provide("guardWebhook", guardWebhook.origin);
  // Upstreams that act as the signed-in user, and their authorization server (oidc-provider).
  const oauth = await startOAuthUpstream();
  const issuers = { issuer: oauth.issuer, noIssIssuer: oauth.noIssIssuer, hostileIssuer: oauth.hostileIssuer };
  project.provide("oauthUpstream", {
    origin: oauth.upstreamOrigin,
    ...issuers,
    staticClient: { id: STATIC_CLIENT_ID, secret: STATIC_CLIENT_SECRET },
  });
  // Upstreams taking users' own keys or exchanged tokens, their token endpoint, an MCP App.
  const userCredentials = await startUserCredentialsUpstream();
  project.provide("userCredentialsUpstream", {
    origin: userCredentials.origin,
    exchangeClient: { id: EXCHANGE_CLIENT_ID, secret: EXCHANGE_CLIENT_SECRET },
  });
  // The operator's OpenID Connect provider that users of the gateway's own sign-in log in at (AUTH.signIn).
  // Its client for the gateway takes the callback at the workerd tests' deployed origin and at a local one
  // (http://127.0.0.1:8787, as under npm start: test/client-sign-in/client-sign-in-loopback-cimd.test.ts).
  const operatorIdp = await startOperatorIdp([GATEWAY_CALLBACK, "http://127.0.0.1:8787/oauth/sign-in/callback"]);
  project.provide("operatorIdp", {
    issuer: operatorIdp.issuer,
    clientId: GATEWAY_CLIENT_ID,
    clientSecret: GATEWAY_CLIENT_SECRET,
  });
  // github.com and its API, stood in for on loopback (AUTH.signIn with "provider": "github").
  const githubIdp = await startGithubIdp([GATEWAY_CALLBACK]);
  project.provide("githubIdp", {
    url: githubIdp.url,
    apiUrl: githubIdp.apiUrl,
    clientId: GITHUB_CLIENT_ID,
    clientSecret: GITHUB_CLIENT_SECRET,
  });
  // Client ID Metadata Documents on loopback over http (client sign-in under npm start).
  const clientMetadata = await startClientMetadataServer();
  project.provide("clientMetadataServer", clientMetadata.origin);
  return async () => {
    await Promise.all([
      clientMetadata.close(),
      operatorIdp.close(),
      userCredentials.close(),
      githubIdp.close(),
      fastmcp.close(),
      everything.close(),
      getStream.close(),
      alpha.close(),
      beta.close(),
      raw.close(),
      flood.close(),
      names.close(),
      faulty.close(),
      script.close(),
      tasks.close(),
      trace.close(),
      jwks.close(),
      modern.close(),
      mrtr.close(),
      dualEra.close(),
      sessionfulDual.close(),
      pins.close(),
      listCache.close(),
      guardWebhook.close(),
      oauth.close(),
    ]);
  };
}

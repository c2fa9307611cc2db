// What test/global-setup.ts provides to the Worker's bindings and to the tests.
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    upstreams: { name: string; url: string }[];
    fixtureUrls: { alpha: string; beta: string; raw: string };
    /** test/fixtures/flood-upstream.ts: floods its answers, counting what the reader took. */
    floodUrl: string;
    /** Base URL of test/fixtures/names-upstream.ts (append `/<mode>/<key>/mcp`). */
    namesUpstream: string;
    /** Origin of test/fixtures/faulty-upstream.ts; append `/<mode>/<tag>`. */
    faultyUpstreamUrl: string;
    /** Origin of test/fixtures/script-upstream.ts: `POST /scripts/<tag>?chunk=N` stores the SSE body a call to `/<tag>/mcp` is answered with. */
    scriptUpstream: string;
    /** Origin of test/fixtures/guard-webhook.ts: `POST /verdicts/<tag>` scripts what `POST /check/<tag>` answers. */
    guardWebhook: string;
    /** Origin of test/fixtures/tasks-upstream.ts; append `/<label>/mcp`. */
    tasksUpstreamUrl: string;
    /** test/fixtures/trace-upstream.ts: answers with the trace context that reached it. */
    traceUpstreamUrl: string;
    /** test/fixtures/mrtr-upstream.ts: answers with input_required and checks its requestState comes back byte for byte. */
    mrtrUpstreamUrl: string;
    /** test/fixtures/conformance-upstream-2026.ts: SDK v2 `createMcpHandler` default, serves 2026-07-28 and (statelessly) 2025 requests; `<origin>/counts` per era. */
    dualEraUpstreamUrl: string;
    /** test/fixtures/dual-era-upstream.ts: sessionful 2025 (SDK v1) and stateless 2026-07-28 (SDK v2, NDJSON answers) on one URL; `<origin>/counts` per era. */
    sessionfulDualUpstream: { url: string; origin: string };
    /** test/fixtures/modern-upstream.ts: a 2026-07-28-only SDK v2 upstream (`legacy: "reject"`); `<origin>/seen` lists the headers it received. */
    modernUpstreamUrl: string;
    /** Origin of test/fixtures/pins-upstream.ts: `/<label>/mcp` serves, `POST /<label>/variant/<variant>` changes its definitions. */
    pinsUpstreamUrl: string;
    /** test/fixtures/fastmcp-upstream.ts: a fastmcp httpStream server whose tools elicit and sample (asked on the GET stream). */
    fastmcpUpstreamUrl: string;
    /** test/fixtures/everything-upstream.ts: @modelcontextprotocol/server-everything over Streamable HTTP (roots asked on the GET stream). */
    everythingUpstreamUrl: string;
    /** test/fixtures/get-stream-upstream.ts: asks `roots/list` on its sessions' GET streams when `<origin>/ask` is POSTed. */
    getStreamUpstream: { url: string; origin: string };
    /** Origin of test/fixtures/list-cache-upstream.ts: `/modern/<hint>/<tag>/mcp`, `/legacy/<tag>/mcp`; `GET /count/<tag>` counts list requests. */
    listCacheUpstream: string;
    /** test/fixtures/jwks-server.ts: a JWKS on loopback and the private keys (JWK) it publishes. */
    /** test/fixtures/oauth-upstream.ts: `<origin>/<label>/mcp` upstreams that check users' tokens, `<origin>/stats`, and their authorization server's issuer. */
    /** Origin of test/fixtures/user-credentials-upstream.ts: `/<label>/mcp`, `/<label>/seen`, `POST /token` (RFC 8693), `/token/stats`. */
    userCredentialsUpstream: { origin: string; exchangeClient: { id: string; secret: string } };
    oauthUpstream: {
      origin: string;
      issuer: string;
      /** The server sending no RFC 9207 iss (labels `noiss…`), and the hostile one (labels `evil…`). */
      noIssIssuer: string;
      hostileIssuer: string;
      /** The confidential client registered with the issuer by hand. */
      staticClient: { id: string; secret: string };
    };
    /** test/fixtures/operator-idp.ts: the operator's OpenID Connect provider (client sign-in) and the gateway's client there. */
    operatorIdp: { issuer: string; clientId: string; clientSecret: string };
    /** Origin of test/fixtures/client-metadata-server.ts: `PUT`/`DELETE`/`GET /clients/<tag>`, `GET /count/<tag>`. */
    clientMetadataServer: string;
    /** test/fixtures/github-idp.ts: github.com and its API on loopback, and the gateway's OAuth app there. */
    githubIdp: { url: string; apiUrl: string; clientId: string; clientSecret: string };
    jwks: {
      url: string;
      fetchesUrl: string /** `<origin>/idp`: an issuer per tag whose JWKS a test can break (see the fixture). */;
      idpUrl: string;
      keys: { rsa: import("jose").JWK; ec: import("jose").JWK };
    };
  }
}

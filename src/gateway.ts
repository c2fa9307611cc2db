/**
 * The composition root: the one module that knows both the skeleton and the features, and
 * wires each feature into the registration points the skeleton exposes (the shell's pages
 * and token verifiers, the sections of AUTH). Nothing in src/ imports it but the Worker's
 * entry (src/index.ts); the skeleton never imports a feature (see ARCHITECTURE.md).
 */
import { addAuthSection } from "./config/auth-config";
import { addConfigSection, gatewayConfig, joinUpstreamsWith } from "./config/gateway-config";
import type { TokenVerifierFor } from "./auth/authenticate";
import { API_KEYS } from "./features/api-keys/api-keys";
import { grantOnce } from "./features/personas/persona-grant";
import { reachableUpstreams } from "./features/personas/reachable-upstreams";
import { createShell, type GatewayBindings, type ShellParts } from "./shell/app";
import { buildPipeline, pipelineFor } from "./chain";
import type { PipelineOptions } from "./pipeline/options";
import { addUpstreamSignInRoutes } from "./features/upstream-sign-in/sign-in-routes";
import { signInFrom, type SignInConfig } from "./features/client-sign-in/config";
import { looksLikeSignInToken, signInTokenCheck } from "./features/client-sign-in/access-token";
import { addClientSignInRoutes } from "./features/client-sign-in/routes";
import { DEFAULT_OFFLOAD, offloadFromVar } from "./features/offload/offload-config";
import type { OffloadConfig } from "./features/offload/offload-override";
import { auditFromVar } from "./features/audit/audit-config";
import { auditFailedAuthentication } from "./features/audit/failure-audit";
import { onRefreshFailure } from "./upstream/oauth/access-token";
import { auditConnection } from "./features/upstream-sign-in/connection-events";
import type { AdminRoutes } from "./admin/app";
import { addAuditRoutes } from "./features/audit/audit-admin";
import { createShapingAdmin } from "./features/shaping/shaping-admin";
import { createUpstreamsAdmin } from "./admin/upstreams";
import { createPinsAdmin, upstreamPinFacts } from "./features/pins/pins-admin";
import { PINNING_FIELDS } from "./features/pins/upstream-fields";
import { addUpstreamSection } from "./config/upstreams";
import { createApiKeyRoutes } from "./features/api-keys/api-keys-admin";
import { onUserCredential } from "./upstream/caller-credentials";
import { userCredentialSource } from "./features/user-credentials/credential-source";
import { addUserKeyRoutes } from "./features/user-credentials/user-key-page";
import { createAccessRoutes } from "./features/personas/access-documents";
import { createUpstreamConnectionRoutes } from "./features/upstream-sign-in/connections-admin";
import { downloadIcon } from "./features/shaping/icon-download";
import { downloadPayload } from "./features/offload/payload-download";
import { addFilterRoutes } from "./features/filters/filters-admin";
import { routeShapes } from "./features/filters/listed-shapes";
import { mountConsole, type ConsolePage } from "./admin/console/index";
import { registerOverview } from "./features/console/overview";
import { registerUpstreams } from "./features/console/upstreams";
import { registerTools } from "./features/console/tools";
import { registerServersPage } from "./features/named-servers/console-routes";
import { registerFilters } from "./features/filters/filters-page";
import { registerPersonas } from "./features/console/personas";
import { registerApiKeys } from "./features/console/api-keys";
import { auditPage } from "./features/audit/audit-page";
import { isPinEvent, PinEventRow } from "./features/pins/pin-event-row";
import { registerShaping } from "./features/shaping/shaping-page";
import { registerPins } from "./features/pins/pins-page";
import { registerGuardrailsPage } from "./features/guardrails/console-page";
import { createGuardrailsAdmin } from "./features/guardrails/admin-routes";
import { addApprovalAdminRoutes, addApproverRoutes, registerApprovalsPage } from "./features/approvals/routes";
import { registerClientGrants } from "./features/client-sign-in/console-page";
import { createClientGrantRoutes } from "./features/client-sign-in/grant-routes";
import { checkRoleMapping, ROLE_MAPPING_KEY } from "./features/client-sign-in/role-mapping";
import { documentRoutes } from "./admin/document-routes";
import { refreshLiveUpstreams, withLiveUpstreams } from "./features/live-upstreams/live-list";
import { createLiveUpstreamRoutes, upstreamSource } from "./features/live-upstreams/routes";
import { NAMED_SERVER_ENDPOINT } from "./features/named-servers/endpoint";
import { createNamedServerRoutes } from "./features/named-servers/admin-routes";

declare module "./config/gateway-config" {
  interface ConfigSections {
    /** Offload settings: the defaults under the OFFLOAD var (the plan in KV may override them). */
    readonly offload: OffloadConfig;
  }
}

declare module "./config/auth-config" {
  interface AuthSections {
    /** The gateway as its clients' authorization server (features/client-sign-in/config.ts; off when absent). */
    readonly signIn: SignInConfig;
  }
}

addAuthSection("signIn", signInFrom);
addUpstreamSection(PINNING_FIELDS);
addConfigSection("offload", "OFFLOAD", (raw) => ({ ...DEFAULT_OFFLOAD, ...offloadFromVar(raw) }));
addConfigSection("audit", "AUDIT", auditFromVar);
joinUpstreamsWith(withLiveUpstreams);
onUserCredential(userCredentialSource);
// A failed refresh of a user's upstream token is a connection event in the audit trail (the call's waitUntil sends it).
onRefreshFailure((services, failure) => {
  if (services.waitUntil)
    auditConnection(services.auditQueue, services.waitUntil, { kind: "refresh-failed", ...failure });
});

/** Client sign-in's access tokens, checked on /mcp, `GET /` and the user's upstream connections. */
const signInVerifier: TokenVerifierFor = (env, auth, origin, upstreams, route) => {
  const verify = signInTokenCheck(env, auth, origin, upstreams, route);
  return verify && { claims: looksLikeSignInToken, verify };
};

/** The admin API's route groups, in order. */
const ADMIN_ROUTES: readonly AdminRoutes[] = [
  addFilterRoutes,
  addAuditRoutes,
  (admin) => admin.route("/", createShapingAdmin()),
  (admin) =>
    admin.route(
      "/",
      createUpstreamsAdmin(async (upstream, kv) => ({
        source: upstreamSource(upstream),
        ...(await upstreamPinFacts(upstream, kv)),
      })),
    ),
  (admin) => admin.route("/", createLiveUpstreamRoutes()),
  (admin) => admin.route("/", createNamedServerRoutes()),
  (admin) => admin.route("/", createPinsAdmin()),
  (admin) => admin.route("/api-keys", createApiKeyRoutes()),
  (admin) => admin.route("/upstream-connections", createUpstreamConnectionRoutes()),
  (admin) => admin.route("/client-grants", createClientGrantRoutes()),
  (admin) =>
    documentRoutes(admin, "/sign-in-roles", {
      key: ROLE_MAPPING_KEY,
      label: "sign-in role mapping",
      check: checkRoleMapping,
    }),
  (admin) => admin.route("/", createAccessRoutes()),
  (admin) => admin.route("/", createGuardrailsAdmin()),
  addApprovalAdminRoutes,
];

/** The console's pages, in order (the navigation's order is admin/console/layout.tsx's). */
const CONSOLE_PAGES: readonly ConsolePage[] = [
  registerOverview,
  registerUpstreams,
  registerTools,
  registerFilters,
  registerPersonas,
  registerApiKeys,
  auditPage([{ matches: isPinEvent, Row: PinEventRow }]),
  registerShaping,
  registerGuardrailsPage,
  registerApprovalsPage,
  registerServersPage,
  registerPins,
  registerClientGrants,
];

const SHELL_PARTS: ShellParts = {
  buildPipeline: (config, options) => (options ? buildPipeline(config, options) : pipelineFor(config)),
  tokenVerifier: signInVerifier,
  apiKeys: API_KEYS,
  grants: { once: grantOnce, reachable: reachableUpstreams },
  sessionShapes: (services, route, upstreams) =>
    routeShapes(services.kv, services.config.documentCacheTtlMs, route, upstreams),
  recordFailure: auditFailedAuthentication,
  routes: [
    (app) => app.get("/icons/:name", (c) => downloadIcon(c.req.raw, c.env, c.req.param("name"))),
    (app) => app.get("/payloads/:id", (c) => downloadPayload(c.req.raw, c.env, c.req.param("id"))),
    addApproverRoutes(signInVerifier),
  ],
  adminRoutes: ADMIN_ROUTES,
  // The console first, then upstream sign-in's pages, then the gateway as its clients' authorization server (AUTH.signIn).
  beforeEachRequest: [(env) => refreshLiveUpstreams(env, gatewayConfig(env).documentCacheTtlMs)],
  endpoints: [NAMED_SERVER_ENDPOINT],
  pageRoutes: [
    (app, admin) => mountConsole(app, admin, CONSOLE_PAGES, auditFailedAuthentication),
    (app) => addUpstreamSignInRoutes(app, signInVerifier),
    addUserKeyRoutes,
    addClientSignInRoutes,
  ],
};

/**
 * Builds the gateway's hono app: the shell with every feature plugged in. `pipeline` options
 * (a rearranged middleware list, call observers) give an app whose pipeline differs from the Worker's.
 *
 * @example
 * const app = createApp({ observers: [(record) => records.push(record)] });
 */
export function createApp(pipeline?: PipelineOptions) {
  return createShell(SHELL_PARTS, pipeline);
}

export type { GatewayBindings };

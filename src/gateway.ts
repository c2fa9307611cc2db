/**
 * The composition root: the one module that knows both the skeleton and the features, and
 * wires each feature into the registration points the skeleton exposes (the shell's pages
 * and token verifiers, the sections of AUTH). Nothing in src/ imports it but the Worker's
 * entry (src/index.ts); the skeleton never imports a feature (see ARCHITECTURE.md).
 */
import { addAuthSection } from "./config/auth-config";
import type { TokenVerifierFor } from "./auth/authenticate";
import { createShell, type GatewayBindings, type ShellParts } from "./shell/app";
import type { PipelineOptions } from "./pipeline/index";
import { addUpstreamSignInRoutes } from "./shell/upstream-sign-in";
import { signInFrom, type SignInConfig } from "./features/client-sign-in/config";
import { looksLikeSignInToken, signInTokenCheck } from "./features/client-sign-in/access-token";
import { addClientSignInRoutes } from "./features/client-sign-in/routes";

declare module "./config/auth-config" {
  interface AuthSections {
    /** The gateway as its clients' authorization server (features/client-sign-in/config.ts; off when absent). */
    readonly signIn: SignInConfig;
  }
}

addAuthSection("signIn", signInFrom);

/** Client sign-in's access tokens, checked on /mcp, `GET /` and the user's upstream connections. */
const signInVerifier: TokenVerifierFor = (env, auth, origin, upstreams, route) => {
  const verify = signInTokenCheck(env, auth, origin, upstreams, route);
  return verify && { claims: looksLikeSignInToken, verify };
};

const SHELL_PARTS: ShellParts = {
  tokenVerifier: signInVerifier,
  // Upstream sign-in's pages first, then the gateway as its clients' authorization server (AUTH.signIn).
  pageRoutes: [(app) => addUpstreamSignInRoutes(app, signInVerifier), addClientSignInRoutes],
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

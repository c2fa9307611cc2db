/**
 * Whether client sign-in is on for a request, and the configuration it runs with: every
 * route of this folder answers only when AUTH.signIn is set (else as before: not found).
 */
import { gatewayConfig } from "../../config/gateway-config";
import type { AuthConfig } from "../../config/auth-config";
import type { SignInConfig } from "./config";

/** What a sign-in route needs: AUTH, its signIn part, the upstreams' names, the gateway's origin. */
export type On = { auth: AuthConfig; signIn: SignInConfig; upstreams: string[]; origin: string };

/** The configuration when sign-in is on, else undefined. */
export function signInOn(c: { env: Readonly<Record<string, unknown>>; req: { url: string } }): On | undefined {
  const config = gatewayConfig(c.env);
  if (!config.auth.ok || config.auth.value.mode !== "on" || !config.auth.value.signIn) return undefined;
  const upstreams = config.upstreams.ok ? config.upstreams.value.map((u) => u.name) : [];
  return { auth: config.auth.value, signIn: config.auth.value.signIn, upstreams, origin: new URL(c.req.url).origin };
}

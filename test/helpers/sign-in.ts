/**
 * Sign-in in the workerd tests: the scripted browser (helpers/node/sign-in-browser.ts)
 * reaching the gateway through the Worker's fetch and the fixture authorization server
 * over loopback; the fixture's URLs and counters.
 */
import { inject, type ProvidedContext } from "vitest";
import { gatewayFetch, type Vars } from "./gateway";
import { SignInBrowser } from "./node/sign-in-browser";

const GATEWAY_HOST = "gateway.test";

/** A browser whose requests to gateway.test go to the Worker (with `vars`), the others to loopback. */
export class Browser extends SignInBrowser {
  constructor(vars: Vars) {
    super((href, init) =>
      new URL(href).host === GATEWAY_HOST
        ? gatewayFetch(href, { ...init, redirect: "manual" }, vars, undefined, true)
        : fetch(href, { ...init, redirect: "manual" }),
    );
  }
}

/** The fixture: `<origin>/<label>/mcp` upstreams, their authorization server. */
export function oauthFixture(): ProvidedContext["oauthUpstream"] {
  return inject("oauthUpstream");
}

/** What the fixture's authorization server counted (refresh grants, revoked grants). */
export async function authorizationServerStats(): Promise<{ refreshes: number; revocations: number }> {
  return (await (await fetch(`${oauthFixture().origin}/stats`)).json()) as { refreshes: number; revocations: number };
}

/**
 * A person in a browser for the tests of client sign-in (AUTH.signIn), in workerd and in
 * Node alike: follows redirects with its own cookie jar, logs in at the operator's provider
 * (the login form of test/fixtures/oauth-upstream.ts) as a given user and answers the
 * gateway's consent page, until the browser is sent to the client's redirect URI or stops
 * on a page.
 */
import { SignInBrowser, type BrowserSend } from "./sign-in-browser.ts";

const MAX_STEPS = 20;

/** What the person does on the consent page: allow, deny, or stop there ("look"). */
export type Decision = "allow" | "deny" | "look";

/** Where a walk through the browser ended: back at the client (its redirect), or on a page. */
export type WalkEnd = { redirect?: URL; page?: { status: number; text: string; url: string } };

export class ClientSignInBrowser extends SignInBrowser {
  private readonly user: string;
  private readonly decision: Decision;

  constructor(user: string, decision: Decision = "allow", send?: BrowserSend) {
    super(send);
    this.user = user;
    this.decision = decision;
  }

  /** Opens `url` and goes on until the browser is sent to `stopAt` or stops on a page. */
  async walk(url: string, stopAt: string): Promise<WalkEnd> {
    let next = url;
    let init: { method?: string; body?: string; headers?: Record<string, string> } = {};
    for (let step = 0; step < MAX_STEPS; step++) {
      const response = await this.request(next, init);
      init = {};
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        const target = new URL(location, next).href;
        if (target.startsWith(stopAt)) return { redirect: new URL(target) };
        next = target;
        continue;
      }
      const text = await response.text();
      const form = { "content-type": "application/x-www-form-urlencoded" };
      if (response.status === 200 && text.includes('name="login"')) {
        next = new URL(/action="([^"]+)"/.exec(text)![1]!, next).href;
        init = { method: "POST", body: new URLSearchParams({ login: this.user }).toString(), headers: form };
        continue;
      }
      if (response.status === 200 && text.includes("data-consent") && this.decision !== "look") {
        const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(text)![1]!;
        const action = new URL(/action="([^"]+)"/.exec(text)![1]!, next);
        next = action.href;
        init = {
          method: "POST",
          body: new URLSearchParams({
            handle: field("handle"),
            user: field("user"),
            decision: this.decision,
          }).toString(),
          headers: { ...form, origin: action.origin },
        };
        continue;
      }
      return { page: { status: response.status, text, url: next } };
    }
    throw new Error("the sign-in did not end");
  }
}

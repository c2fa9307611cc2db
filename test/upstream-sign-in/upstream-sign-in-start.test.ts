/**
 * The page a sign-in link opens and its form's POST (`/oauth/upstream/<name>/start`), for
 * what a person or a client controls there: a principal whose invisible or bidi characters
 * would make it read as another user's name, and bodies that are not the page's form
 * (too large, multipart, malformed). Through the Worker in workerd, with the fixture
 * authorization server of test/fixtures/oauth-upstream.ts; the rest of sign-in is in
 * test/upstream-sign-in*.test.ts.
 */
import { describe, expect, it } from "vitest";
import { gatewayFetch } from "../helpers/gateway";
import { makeKey } from "../helpers/auth";
import { Browser } from "../helpers/sign-in";
import { linkOf, signInWorld } from "../helpers/sign-in-world";
import { MAX_START_BODY_BYTES } from "../../src/features/upstream-sign-in/sign-in-routes";
import { MAX_DRAIN_BYTES } from "../../src/core/bounded-text";
import { countedJunk, drainedAtMost } from "../helpers/counted-body";

const { label, vars: VARS, caller, session, callTool } = signInWorld();
const MULTIPART = "multipart/form-data; boundary=x";

/** A fresh, unused sign-in link to "acme" for `who`. */
async function freshLink(who: Awaited<ReturnType<typeof caller>>): Promise<string> {
  return linkOf(await callTool(who, await session(who), "acme___whoami"));
}

describe("the confirm page", () => {
  it("shows a principal's bidi and invisible characters as code points (\\u202Eecila is not alice)", async () => {
    const principal = `\u202Eecila\u200B-${label}`;
    const { headers } = await makeKey({ principal, roles: ["user"] }, VARS);
    const link = await freshLink({ principal, headers });
    const shown = await new Browser(VARS).request(link);
    expect(shown.status).toBe(200);
    const page = await shown.text();
    expect(page).not.toMatch(/[\u202E\u200B]/);
    expect(page).toContain(`<code>[U+202E]</code>ecila<code>[U+200B]</code>-${label}`);
    // The form still carries the link as it is, and continues.
    expect((await new Browser(VARS).confirm(link, page)).status).toBe(303);
  });
});

describe("the form's POST", () => {
  const post = (link: string, body: BodyInit, type: string) =>
    gatewayFetch(link, { method: "POST", body, headers: { "content-type": type, origin: new URL(link).origin } }, VARS);

  it("refuses a body larger than the form with 413, reading no more than the limit", async () => {
    const link = await freshLink(await caller());
    const junk = `link=${"a".repeat(MAX_START_BODY_BYTES)}`;
    const refused = await post(link, junk, "application/x-www-form-urlencoded");
    expect(refused.status).toBe(413);
    expect(await refused.text()).toContain("A sign-in form holds one link");
    // The link was not used up by the refused POST: the page's own form still continues.
    expect((await new Browser(VARS).start(link)).status).toBe(303);
  });

  // A client that has not finished sending loses the page with the connection (test/e2e/refused-body.test.ts).
  it.each([
    ["past the limit", "application/x-www-form-urlencoded", 413],
    ["not the form", "application/json", 400],
  ])("reads a refused body (%s) to its end before answering, up to MAX_DRAIN_BYTES", async (_what, type, status) => {
    const link = await freshLink(await caller());
    const junk = countedJunk(5 * 1024 * 1024);
    expect((await post(link, junk.body, type)).status).toBe(status);
    expect(junk.read()).toBe(5 * 1024 * 1024);
    const huge = countedJunk(64 * 1024 * 1024);
    expect((await post(link, huge.body, type)).status).toBe(status);
    expect(huge.read()).toBeLessThanOrEqual(drainedAtMost(MAX_DRAIN_BYTES));
  });

  it.each([
    ["a malformed multipart body", MULTIPART, "--x\r\ncontent-disposition: form-data\r\n\r\nno end"],
    [
      "a well-formed multipart body",
      MULTIPART,
      `--x\r\n${'content-disposition: form-data; name="link"'}\r\n\r\nabc\r\n--x--\r\n`,
    ],
    ["a JSON body", "application/json", '{"link":"abc"}'],
  ])("refuses %s with 400 and says what to send", async (_what, type, body) => {
    const link = await freshLink(await caller());
    const refused = await post(link, body, type);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("application/x-www-form-urlencoded");
    expect((await new Browser(VARS).start(link)).status).toBe(303);
  });
});

/**
 * The page a sign-in link opens and its form's POST (`/oauth/upstream/<name>/start`), for
 * what a person or a client controls there: a principal whose invisible or bidi characters
 * would make it read as another user's name, and bodies that are not the page's form
 * (too large, multipart, malformed). Through the Worker in workerd, with the fixture
 * authorization server of test/fixtures/oauth-upstream.ts; the rest of sign-in is in
 * test/upstream-sign-in*.test.ts.
 */
import { describe, expect, it } from "vitest";
import { makeKey } from "./helpers/auth";
import { Browser } from "./helpers/sign-in";
import { linkOf, signInWorld } from "./helpers/sign-in-world";

const { label, vars: VARS, caller, session, callTool } = signInWorld();

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

/**
 * A document edited in the console while someone else changed it: every editor sends the
 * ETag its page was loaded with in If-Match, so the admin API refuses the stale save (412);
 * the console shows that error next to the document, keeps the operator's text on screen,
 * and the other edit stays stored (nothing is lost on either side). A document absent when
 * the page was loaded is saved with If-None-Match: *, so one created meanwhile is not
 * overwritten either. Deleting a filter set or a persona sends the ETag its page showed
 * the same way.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { admin } from "../helpers/admin";
import { consoleGet, consolePost, signIn, type ConsoleSignIn } from "../helpers/console";

let session: ConsoleSignIn;
beforeAll(async () => {
  session = await signIn();
});

/** The ETag in the hidden field of the form posting to `action` on `html`. */
function formEtag(html: string, action: string): string {
  const form = new RegExp(`<form[^>]* action="/admin/console${action}"[^]*?</form>`).exec(html)?.[0] ?? "";
  const value = /<input type="hidden" name="etag" value="([^"]*)"\/>/.exec(form)?.[1];
  if (!value) throw new Error(`no ETag in the form posting to ${action}`);
  return value.replace(/&quot;/g, '"');
}

type Case = {
  what: string;
  /** The console page with the editor, the form's action, the admin API path of the document. */
  page: string;
  action: string;
  api: string;
  /** The id of the element the API's problems are shown in. */
  problems: string;
  /** What is stored first, what someone else stores meanwhile, and the operator's stale text. */
  first: unknown;
  theirs: unknown;
  mine: Record<string, string>;
  /** The operator's text as the page shows it again. */
  kept: string;
};

const CASES: Case[] = [
  {
    what: "the plan",
    page: "/filters",
    action: "/plan",
    api: "/plan",
    problems: "plan-document-problems",
    first: { default: "one" },
    theirs: { default: "theirs" },
    mine: { document: "default: mine\n" },
    kept: "default: mine\n",
  },
  {
    what: "visibility",
    page: "/personas",
    action: "/personas/visibility",
    api: "/visibility",
    problems: "visibility-document-problems",
    first: { deny: ["x___one"] },
    theirs: { deny: ["x___theirs"] },
    mine: { document: "deny: [x___mine]\n" },
    kept: "deny: [x___mine]\n",
  },
  {
    what: "the rules",
    page: "/shaping",
    action: "/shaping/rules",
    api: "/rules",
    problems: "doc-rules-problems",
    first: { hints: { x___a: "one" } },
    theirs: { hints: { x___a: "theirs" } },
    mine: { document: "hints:\n  x___a: mine\n" },
    kept: "hints:\n  x___a: mine\n",
  },
  {
    what: "a filter set",
    page: "/filters/edit/stale-set",
    action: "/filters/preview",
    api: "/filter-sets/stale-set",
    problems: "set-problems",
    first: { tools: { x___a: { retain: ["/one"] } } },
    theirs: { tools: { x___a: { retain: ["/theirs"] } } },
    mine: { name: "stale-set", document: "tools:\n  x___a:\n    retain: [/mine]\n", tool: "", result: "" },
    kept: "tools:\n  x___a:\n    retain: [/mine]\n",
  },
  {
    what: "a persona",
    page: "/personas?edit=stale-persona",
    action: "/personas/preview",
    api: "/personas/stale-persona",
    problems: "persona-error",
    first: { roles: ["r-stale"], allow: ["x___one"] },
    theirs: { roles: ["r-stale"], allow: ["x___theirs"] },
    mine: { name: "stale-persona", roles: "r-stale", allow: "x___mine", deny: "", rateLimit: "" },
    kept: "x___mine</textarea>",
  },
];

/** Deletes what a case stored: plan, rules, personas, filter sets apply to every later file (they share this KV). */
async function deleteStored(api: string): Promise<void> {
  const { status } = await admin("DELETE", api);
  expect(status === 404 || status < 300, `DELETE ${api}: ${status}`).toBe(true);
}

/** Where the save goes: the filter and persona editors save with their second button. */
function saveAction(c: Case): string {
  return c.action === "/filters/preview"
    ? "/filters/save"
    : c.action === "/personas/preview"
      ? "/personas/save"
      : c.action;
}

describe.each(CASES)("$what, edited in the console after someone else changed it", (c) => {
  beforeEach(async () => {
    expect((await admin("PUT", c.api, c.first)).status).toBe(200);
  });
  afterEach(() => deleteStored(c.api));

  it("is refused with the API's 412 next to the document, keeps the operator's text, and leaves the other edit stored", async () => {
    const page = await (await consoleGet(c.page, session)).text();
    const etag = formEtag(page, c.action);
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await admin("PUT", c.api, c.theirs)).status).toBe(200);
    const theirs = await (await admin("GET", c.api)).text();

    const response = await consolePost(saveAction(c), { ...c.mine, etag }, session);
    expect(response.status).toBe(412);
    const html = await response.text();
    expect(html).toMatch(
      new RegExp(
        `<(div|span) id="${c.problems}" class="problems"( role="alert")?><p>Precondition Failed: it changed since you read it; nothing was stored[^<]*\\(someone changed it after this page was loaded: your text is kept here; reload the page, then make your change again\\)</p>`,
      ),
    );
    expect(html).toContain(c.kept);
    expect(await (await admin("GET", c.api)).text()).toBe(theirs);
  });

  it("saves when nothing changed since the page was loaded", async () => {
    const etag = formEtag(await (await consoleGet(c.page, session)).text(), c.action);
    expect((await consolePost(saveAction(c), { ...c.mine, etag }, session)).status).toBe(303);
    expect(await (await admin("GET", c.api)).text()).not.toContain("theirs");
    expect(await (await admin("GET", c.api)).text()).toContain("mine");
  });
});

type AbsentCase = {
  what: string;
  page: string;
  action: string;
  save: string;
  api: string;
  problems: string;
  theirs: unknown;
  mine: Record<string, string>;
  kept: string;
};

const ABSENT_CASES: AbsentCase[] = [
  {
    what: "the plan",
    page: "/filters",
    action: "/plan",
    save: "/plan",
    api: "/plan",
    problems: "plan-document-problems",
    theirs: { default: "theirs" },
    mine: { document: "default: mine\n" },
    kept: "default: mine\n",
  },
  {
    what: "the rules",
    page: "/shaping",
    action: "/shaping/rules",
    save: "/shaping/rules",
    api: "/rules",
    problems: "doc-rules-problems",
    theirs: { hints: { x___a: "theirs" } },
    mine: { document: "hints:\n  x___a: mine\n" },
    kept: "hints:\n  x___a: mine\n",
  },
  {
    what: "a new filter set",
    page: "/filters/new",
    action: "/filters/preview",
    save: "/filters/save",
    api: "/filter-sets/absent-set",
    problems: "set-problems",
    theirs: { tools: { x___a: { retain: ["/theirs"] } } },
    mine: {
      name: "absent-set",
      "is-new": "1",
      document: "tools:\n  x___a:\n    retain: [/mine]\n",
      tool: "",
      result: "",
    },
    kept: "tools:\n  x___a:\n    retain: [/mine]\n",
  },
];

describe.each(ABSENT_CASES)("$what, absent when the page was loaded", (c) => {
  beforeEach(async () => {
    await admin("DELETE", c.api);
    expect((await admin("GET", c.api)).status).toBe(404);
  });
  afterEach(() => deleteStored(c.api));

  it("is not overwritten when someone created it meanwhile: the 412 is shown in place and the operator's text kept", async () => {
    const etag = formEtag(await (await consoleGet(c.page, session)).text(), c.action);
    expect((await admin("PUT", c.api, c.theirs)).status).toBe(200);
    const theirs = await (await admin("GET", c.api)).text();

    const response = await consolePost(c.save, { ...c.mine, etag }, session);
    expect(response.status).toBe(412);
    const html = await response.text();
    expect(html).toMatch(
      new RegExp(
        `<(div|span) id="${c.problems}" class="problems"( role="alert")?><p>Precondition Failed: If-None-Match: \\* needs it to be absent, and it exists[^<]*\\(someone changed it after this page was loaded: your text is kept here`,
      ),
    );
    expect(html).toContain(c.kept);
    expect(await (await admin("GET", c.api)).text()).toBe(theirs);
  });

  it("is created when it is still absent", async () => {
    const etag = formEtag(await (await consoleGet(c.page, session)).text(), c.action);
    expect((await consolePost(c.save, { ...c.mine, etag }, session)).status).toBe(303);
    expect(await (await admin("GET", c.api)).text()).toContain("mine");
  });
});

type DeleteCase = {
  what: string;
  page: string;
  action: string;
  api: string;
  problems: string;
  first: unknown;
  theirs: unknown;
};

const DELETE_CASES: DeleteCase[] = [
  {
    what: "a filter set",
    page: "/filters/edit/doomed-set",
    action: "/filters/doomed-set/delete",
    api: "/filter-sets/doomed-set",
    problems: "filters-errors",
    first: { tools: { x___a: { retain: ["/one"] } } },
    theirs: { tools: { x___a: { retain: ["/theirs"] } } },
  },
  {
    what: "a persona",
    page: "/personas",
    action: "/personas/doomed-persona/delete",
    api: "/personas/doomed-persona",
    problems: "personas-errors",
    first: { roles: ["r-doomed"], allow: ["x___one"] },
    theirs: { roles: ["r-doomed"], allow: ["x___theirs"] },
  },
];

describe.each(DELETE_CASES)("$what, deleted in the console after someone else changed it", (c) => {
  beforeEach(async () => {
    expect((await admin("PUT", c.api, c.first)).status).toBe(200);
  });
  afterEach(() => deleteStored(c.api));

  it("is not deleted: the 412 is shown with what to do, and the other edit stays stored", async () => {
    const etag = formEtag(await (await consoleGet(c.page, session)).text(), c.action);
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await admin("PUT", c.api, c.theirs)).status).toBe(200);
    const theirs = await (await admin("GET", c.api)).text();

    const response = await consolePost(c.action, { etag }, session);
    expect(response.status).toBe(412);
    expect(await response.text()).toMatch(
      new RegExp(
        `<div id="${c.problems}" class="problems" role="alert"><p>Precondition Failed: it changed since you read it; nothing was stored[^<]*\\(someone changed it after this page was loaded: nothing was deleted; reload the page`,
      ),
    );
    expect(await (await admin("GET", c.api)).text()).toBe(theirs);
  });

  it("is deleted when nothing changed since the page was loaded", async () => {
    const etag = formEtag(await (await consoleGet(c.page, session)).text(), c.action);
    expect((await consolePost(c.action, { etag }, session)).status).toBe(303);
    expect((await admin("GET", c.api)).status).toBe(404);
  });
});

/**
 * Rules and hints: guidance appended to tool results as text blocks, on /mcp and
 * /mcp/<upstream>, when a rule's tool glob and condition (an argument, a part of the
 * result, a failed call) hold; hints always. The original blocks and structuredContent
 * keep their bytes; the rules fired are on the call record.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/context/call-record";
import { createApp } from "../../src/gateway";
import { ADMIN_VARS, admin, putDocument } from "../helpers/admin";
import { initialize, messageTexts, post, type GatewayTarget, type Json } from "../helpers/gateway";

const VARS = { ...ADMIN_VARS };
const RULES = {
  rules: [
    {
      name: "old-text",
      tool: "alpha___echo",
      when: { argument: "/text", equals: "old" },
      message: "The text 'old' is deprecated; say 'new'.",
    },
    {
      name: "five",
      tool: "alpha___a*",
      when: { result: "/structuredContent/sum", equals: 5 },
      message: "Five is a lucky sum.",
    },
    { name: "failed", tool: "*", when: { failed: true }, message: "This call failed; check its arguments." },
    { name: "other-upstream", tool: "beta___*", message: "Never on alpha." },
  ],
  hints: { alpha___add: "Sums are exact for integers." },
};

beforeEach(async () => {
  await admin("DELETE", "/rules");
});
// And after: the suite shares one KV, and the last test's document would shape every later file's lists.
afterAll(async () => {
  await admin("DELETE", "/rules");
});

async function call(
  path: string,
  tool: string,
  args: unknown,
  target?: GatewayTarget,
): Promise<{ text: string; answer: Json }> {
  const { session } = await initialize(path, { vars: VARS, target });
  const texts = await messageTexts(
    await post(
      path,
      { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: tool, arguments: args } },
      { session, vars: VARS, target },
    ),
  );
  const text = texts[texts.length - 1]!;
  return { text, answer: JSON.parse(text) };
}

const texts = (answer: Json) => (answer.result.content as { text: string }[]).map((block) => block.text);

describe.each([
  ["/mcp", "alpha___"],
  ["/mcp/alpha", ""],
])("rules on %s", (path, prefix) => {
  it.each([
    [
      "an argument condition that holds",
      "echo",
      { text: "old" },
      ["alpha: old", "The text 'old' is deprecated; say 'new'."],
    ],
    ["an argument condition that does not", "echo", { text: "fresh" }, ["alpha: fresh"]],
    [
      "a result condition that holds, with the tool's hint",
      "add",
      { a: 2, b: 3 },
      ["5", "Five is a lucky sum.", "Sums are exact for integers."],
    ],
    ["a result condition that does not, the hint still", "add", { a: 2, b: 2 }, ["4", "Sums are exact for integers."]],
    [
      "a failed call",
      "add",
      { a: "two", b: 2 },
      [expect.stringContaining("validation"), "This call failed; check its arguments.", "Sums are exact for integers."],
    ],
  ])("append guidance for %s", async (_label, tool, args, expected) => {
    const { text: plain } = await call(path, `${prefix}${tool}`, args);
    await putDocument("/rules", RULES);
    const { text, answer } = await call(path, `${prefix}${tool}`, args);
    expect(texts(answer)).toEqual(expected);
    const original = JSON.parse(plain);
    // The original blocks and structuredContent are untouched, byte for byte.
    expect(answer.result.structuredContent).toEqual(original.result.structuredContent);
    expect(answer.result.content.slice(0, original.result.content.length)).toEqual(original.result.content);
    if (original.result.structuredContent) {
      const structured = (t: string) =>
        t.slice(t.indexOf('"structuredContent"'), t.indexOf("}", t.indexOf('"structuredContent"')) + 1);
      expect(structured(text)).toBe(structured(plain));
    }
  });
});

describe("the rules fired", () => {
  it("are written on the call record", async () => {
    const records: CallRecord[] = [];
    const target = createApp({ observers: [(record) => void records.push({ ...record })] }) as unknown as GatewayTarget;
    await putDocument("/rules", RULES);
    await call("/mcp", "alpha___add", { a: 1, b: 4 }, target);
    expect(records.find((r) => r.rulesFired)?.rulesFired).toEqual(["five"]);
  });
});

describe("the rules document", () => {
  it.each([
    ["a rule without a message", { rules: [{ tool: "*" }] }, "/rules/0/message"],
    [
      "a malformed pointer",
      { rules: [{ tool: "*", when: { argument: "text", equals: 1 }, message: "m" }] },
      "/rules/0/when/argument",
    ],
    ["a condition of no known shape", { rules: [{ tool: "*", when: { status: 1 }, message: "m" }] }, "/rules/0/when"],
    ["a hint that is not text", { hints: { "*": 3 } }, "/hints/*"],
  ])("is refused with %s, located", async (_label, body, pointer) => {
    const response = await admin("PUT", "/rules", body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { problems: { path: string }[] }).problems.map((p) => p.path)).toContain(
      pointer,
    );
  });
});

/**
 * The era matrix's one rule (upstream/era-choice.ts): which side of an upstream serves a
 * client, from the client's era and declared capabilities and what discovery learned.
 */
import { describe, expect, it } from "vitest";
import { clientNeeds, sideFor, type ClientNeeds } from "../../src/upstream/era-choice";
import type { UpstreamEra } from "../../src/upstream/era";
import type { UpstreamClient } from "../../src/upstream/upstream-session";

const ONLY_2025: UpstreamEra = { era: "legacy" };
const ONLY_2026: UpstreamEra = { era: "modern", discover: {} };
const SESSIONFUL_DUAL: UpstreamEra = { era: "modern", discover: {}, legacy: { sessionful: true, capabilities: {} } };
const STATELESS_DUAL: UpstreamEra = { era: "modern", discover: {}, legacy: { sessionful: false, capabilities: {} } };

const CLIENT_2025_ASKS: ClientNeeds = { modern: false, answersQuestions: true };
const CLIENT_2025_PLAIN: ClientNeeds = { modern: false, answersQuestions: false };
const CLIENT_2026_ASKS: ClientNeeds = { modern: true, answersQuestions: true };
const CLIENT_2026_PLAIN: ClientNeeds = { modern: true, answersQuestions: false };

describe("sideFor", () => {
  it.each([
    ["2025 client", "2025 only", CLIENT_2025_ASKS, ONLY_2025, "legacy"],
    ["2025 client", "2026 only", CLIENT_2025_ASKS, ONLY_2026, "modern"],
    ["2025 client", "2026 only", CLIENT_2025_PLAIN, ONLY_2026, "modern"],
    ["2025 client answering questions", "sessionful 2025 + 2026", CLIENT_2025_ASKS, SESSIONFUL_DUAL, "legacy"],
    ["2025 client answering none", "sessionful 2025 + 2026", CLIENT_2025_PLAIN, SESSIONFUL_DUAL, "legacy"],
    ["2025 client answering questions", "stateless 2025 + 2026", CLIENT_2025_ASKS, STATELESS_DUAL, "modern"],
    ["2025 client answering none", "stateless 2025 + 2026", CLIENT_2025_PLAIN, STATELESS_DUAL, "legacy"],
    ["2026 client", "2025 only", CLIENT_2026_ASKS, ONLY_2025, "legacy"],
    ["2026 client", "2026 only", CLIENT_2026_PLAIN, ONLY_2026, "modern"],
    ["2026 client", "sessionful 2025 + 2026", CLIENT_2026_ASKS, SESSIONFUL_DUAL, "modern"],
    ["2026 client", "stateless 2025 + 2026", CLIENT_2026_PLAIN, STATELESS_DUAL, "modern"],
  ])("%s, upstream with %s: %s side", (_client, _upstream, client, upstream, side) => {
    expect(sideFor(client, upstream)).toBe(side);
  });
});

describe("clientNeeds", () => {
  const session = (capabilities: Record<string, unknown>, protocolVersion = "2025-11-25"): UpstreamClient => ({
    sid: "s",
    protocolVersion,
    clientCapabilities: capabilities,
    clientInfo: {},
    upstreams: {},
    exp: 0,
  });

  it.each([
    [{ sampling: {} }, true],
    [{ elicitation: { form: {} } }, true],
    [{ roots: { listChanged: true } }, true],
    [{ experimental: {} }, false],
    [{}, false],
  ])("capabilities %j: answers questions %s", (capabilities, answers) => {
    expect(clientNeeds({ session: session(capabilities) }).answersQuestions).toBe(answers);
  });

  it("takes the client's own revision before the one its upstream sessions are opened in", () => {
    expect(clientNeeds({ session: session({}), clientVersion: "2026-07-28" }).modern).toBe(true);
    expect(clientNeeds({ session: session({}), clientVersion: "2025-06-18" }).modern).toBe(false);
    expect(clientNeeds({ session: session({}) }).modern).toBe(false);
  });
});

/**
 * What a message goes through: the chain of layers the built pipeline gives each method
 * (src/chain.ts's table), printed from the pipeline itself for a configuration with every
 * feature on (authentication, audit), compared with the expected list, and found word for
 * word in docs/development.md ("What a message goes through"), so the page cannot drift.
 * A message of another method goes through the wildcard layers only, straight to the relay.
 */
import { describe, expect, it } from "vitest";
import development from "../../docs/development.md?raw";
import { buildChains } from "../../src/chain";
// The composition root registers the features' parts of the configuration (offload, audit).
import "../../src/gateway";
import { gatewayConfig } from "../../src/config/gateway-config";
import type { ChainKey } from "../../src/pipeline/compose";

const config = gatewayConfig({
  AUTH: JSON.stringify({ apiKeys: true }),
  AUDIT: JSON.stringify({ enabled: true, record: "all" }),
});
const { layersOf } = buildChains(config);

/** The outer stage and the wildcard layers every request goes through. */
const OUTER = ["named servers", "call targets", "audit trail", "record"];
const EVERY_REQUEST = ["trace context", "authorization", "client notifications", "rate limit"];

const EXPECTED: readonly (readonly [string, ChainKey, readonly string[]])[] = [
  [
    "tools/call",
    { kind: "request", method: "tools/call" },
    [
      "catalog modes",
      ...OUTER,
      "trace context",
      "client logging",
      "authorization",
      "client notifications",
      "rate limit",
      "sys tools",
      "rules",
      "pinning",
      "offload",
      "output filters",
      "guardrails",
      "relay",
    ],
  ],
  [
    "tools/list",
    { kind: "request", method: "tools/list" },
    [
      "catalog modes",
      ...OUTER,
      "trace context",
      "visibility",
      "authorization",
      "client notifications",
      "rate limit",
      "sys tools",
      "icons",
      "text overrides",
      "output filters",
      "redacted schemas",
      "pinned lists",
      "relay",
    ],
  ],
  [
    "prompts/get",
    { kind: "request", method: "prompts/get" },
    [...OUTER, ...EVERY_REQUEST, "sys tools", "pinning", "relay"],
  ],
  ["resources/read", { kind: "request", method: "resources/read" }, [...OUTER, ...EVERY_REQUEST, "sys tools", "relay"]],
  ["initialize", { kind: "request", method: "initialize" }, [...OUTER, ...EVERY_REQUEST, "text overrides", "relay"]],
  ["other methods (ping)", { kind: "request", method: "ping" }, [...OUTER, ...EVERY_REQUEST, "relay"]],
  [
    "notifications",
    { kind: "notification", method: "notifications/cancelled" },
    ["call targets", "audit trail", "record", "authorization", "client notifications", "rate limit", "relay"],
  ],
  ["responses", { kind: "response" }, ["call targets", "audit trail", "record", "relay"]],
  [
    "listen",
    { kind: "listen" },
    ["call targets", "audit trail", "record", "authorization", "client notifications", "output filters", "relay"],
  ],
  ["end", { kind: "end" }, ["call targets", "audit trail", "record", "relay"]],
];

/** A method's chain as docs/development.md shows it. */
function printed(title: string, key: ChainKey): string {
  return [title, ...layersOf(key).map((name) => `  → ${name}`)].join("\n");
}

describe("the chain of each method, from the built pipeline", () => {
  it.each(EXPECTED)("%s", (title, key, expected) => {
    expect(layersOf(key)).toEqual(expected);
    console.log(printed(title, key));
  });

  it("docs/development.md shows every chain as the pipeline builds it", () => {
    for (const [title, key] of EXPECTED) expect(development).toContain(printed(title, key));
  });

  it("a method no layer names takes the chain of other methods, whatever its name", () => {
    const other = layersOf({ kind: "request", method: "ping" });
    for (const method of ["x/unknown", "constructor", "__proto__", ""])
      expect(layersOf({ kind: "request", method })).toEqual(other);
  });

  it("without audit the audit trail is in no chain", () => {
    const off = buildChains(
      gatewayConfig({ AUTH: JSON.stringify({ apiKeys: true }), AUDIT: JSON.stringify({ enabled: false }) }),
    );
    expect(off.layersOf({ kind: "request", method: "tools/call" })).not.toContain("audit trail");
    expect(off.layersOf({ kind: "end" })).toEqual(["call targets", "record", "relay"]);
  });
});

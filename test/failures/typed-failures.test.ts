/**
 * Typed failures (src/core/failures.ts): the one formatter writes each failure as the wire
 * error clients have always received, and the layers that react to a failure (the sign-in
 * prompt, the catalog's search hint) tell it by its type: an error that merely reads like
 * one (its words, its code, its `data.reason`) gets no reaction.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { GatewayError, errorTextOf } from "../../src/core/errors";
import { failureOf, failureWire, GatewayFailure, type Failure } from "../../src/core/failures";
import { INVALID_PARAMS, type JsonRpcRequest, type WireMessage } from "../../src/core/jsonrpc";
import { newCallRecord } from "../../src/context/call-record";
import type { CallContext } from "../../src/context/call-context";
import { pointToSearch } from "../../src/features/catalog/catalog-modes";
import { askToSignIn } from "../../src/features/upstream-sign-in/sign-in-required";
import { failureError, UPSTREAM_ERROR } from "../../src/upstream/failures";

const asIs = (text: string) => text;

describe("the one formatter", () => {
  it.each<[string, Failure, "legacy" | "modern", { status: number; code: number; message: string; data?: unknown }]>([
    [
      "unreachable",
      { reason: "unreachable", upstream: "alpha", detail: "connection refused" },
      "legacy",
      {
        status: 200,
        code: UPSTREAM_ERROR,
        message: 'upstream "alpha" is unreachable: connection refused',
        data: { upstream: "alpha", reason: "unreachable" },
      },
    ],
    [
      "refused",
      { reason: "http-status", upstream: "alpha", status: 503, detail: "" },
      "modern",
      {
        status: 200,
        code: UPSTREAM_ERROR,
        message: 'upstream "alpha" answered HTTP 503',
        data: { upstream: "alpha", reason: "http-status" },
      },
    ],
    [
      "sign-in required",
      { reason: "sign-in-required", upstream: "gh", detail: "not signed in", challenge: { scope: "repo" } },
      "legacy",
      {
        status: 200,
        code: UPSTREAM_ERROR,
        message: 'upstream "gh" needs you to sign in: not signed in',
        data: { upstream: "gh", reason: "sign-in-required", challenge: { scope: "repo" } },
      },
    ],
    [
      "unknown name",
      { reason: "unknown-name", label: "tool", name: "alpha___nope" },
      "legacy",
      { status: 200, code: INVALID_PARAMS, message: "Unknown tool: alpha___nope" },
    ],
    [
      "unknown name with hints",
      { reason: "unknown-name", label: "prompt", name: "p", hints: ["one", "two"] },
      "modern",
      { status: 200, code: INVALID_PARAMS, message: "Unknown prompt: p (one) (two)" },
    ],
    [
      "unknown method, 2025",
      { reason: "unknown-method", method: "x/y" },
      "legacy",
      { status: 200, code: -32601, message: "Method not found: x/y" },
    ],
    [
      "unknown method, 2026-07-28",
      { reason: "unknown-method", method: "x/y" },
      "modern",
      { status: 404, code: -32601, message: "Method not found: x/y" },
    ],
  ])("%s", (_name, failure, era, wire) => {
    expect(failureWire(failure, era, asIs)).toEqual(wire);
  });

  it("writes the carrier as the boundary error, keeping its type through a new id and era", () => {
    const failure: Failure = { reason: "unknown-method", method: "x/y" };
    const carried = new GatewayFailure(failure, 7).withId(8).inEra("modern");
    expect(carried).toBeInstanceOf(GatewayError);
    expect(failureOf(carried)).toEqual(failure);
    expect([carried.status, carried.id]).toEqual([404, 8]);
    expect(errorTextOf(carried)).toBe(
      '{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found: x/y"}}',
    );
  });

  it("keeps a configured secret out of an upstream failure's message", () => {
    const vars = { SESSION_SECRET: "s3cr3t-value-123" };
    const error = failureError({ reason: "unreachable", upstream: "a", detail: "bad s3cr3t-value-123" }, vars).withId(
      1,
    );
    expect(error.message).toBe('upstream "a" is unreachable: bad [redacted]');
    expect(failureOf(error)).toMatchObject({ reason: "unreachable", detail: "bad s3cr3t-value-123" });
  });
});

describe("the catalog's search hint reacts to an unknown tool's type", () => {
  const hint = "not a tool you may use, or no longer listed: find tools with sys___search_tools";

  it("points an unknown tool at the search tool, after the hints it carries", () => {
    const plain = pointToSearch(new GatewayFailure({ reason: "unknown-name", label: "tool", name: "a___x" }, 3), 3);
    expect(errorTextOf(plain)).toBe(
      `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: a___x (${hint})"}}`,
    );
    const named = new GatewayFailure({
      reason: "unknown-name",
      label: "tool",
      name: "x",
      hints: ['not served by "s"'],
    });
    expect((pointToSearch(named, 4) as GatewayError).message).toBe(`Unknown tool: x (not served by "s") (${hint})`);
  });

  it("leaves an unknown prompt, and an error that only reads like an unknown tool, as they are", () => {
    const prompt = new GatewayFailure({ reason: "unknown-name", label: "prompt", name: "p" }, 1);
    expect(pointToSearch(prompt, 1)).toBe(prompt);
    // Same code, same words: before typed failures this got the hint, as every "Unknown tool…" text did.
    const lookalike = new GatewayError(200, INVALID_PARAMS, "Unknown tool version in arguments", undefined, 1);
    expect(pointToSearch(lookalike, 1)).toBe(lookalike);
  });
});

describe("the sign-in prompt reacts to a sign-in failure's type", () => {
  const request: WireMessage<JsonRpcRequest> = {
    text: '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"gh___issues"}}',
    message: { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "gh___issues" } },
  };
  /** What askToSignIn reads of a call: a 2025 caller without URL elicitation, the real KV. */
  function callContext(): CallContext {
    const identity = { principal: "ann", roles: [], era: "legacy", clientCapabilities: {} };
    const services = { kv: env.GATEWAY_KV, sessionSecret: "typed-failures-test-secret-0123456789" };
    const route = { origin: "https://gateway.example", upstreams: [] };
    return { identity, services, route, record: newCallRecord() } as unknown as CallContext;
  }

  it("answers a typed sign-in failure with a sign-in link, whatever its message says", async () => {
    const failure = failureError(
      { reason: "sign-in-required", upstream: "gh", detail: "any words at all", challenge: {} },
      {},
    );
    const answer = (await askToSignIn(callContext(), request, () => Promise.reject(failure.withId(5)))).text;
    const text = (JSON.parse(answer) as { result: { content: { text: string }[] } }).result.content[0]!.text;
    expect(text).toContain('Sign in to upstream "gh" to use it: open the link in a browser and sign in: ');
    expect(text).toContain("https://gateway.example/oauth/upstream/gh/start?link=s1.");
  });

  it("passes on an error that only carries a sign-in failure's code and data", async () => {
    // Before typed failures, `data.reason` was sniffed: this error minted a link and became a sign-in prompt.
    const lookalike = new GatewayError(
      200,
      UPSTREAM_ERROR,
      'upstream "gh" needs you to sign in: not signed in',
      { upstream: "gh", reason: "sign-in-required", challenge: {} },
      5,
    );
    await expect(askToSignIn(callContext(), request, () => Promise.reject(lookalike))).rejects.toBe(lookalike);
  });
});

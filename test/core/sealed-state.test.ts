import { describe, expect, it } from "vitest";
import { openState, sealState } from "../../src/core/sealed-state";

const SECRET = "a-test-secret-of-enough-length-0123456789";

describe("sealed state", () => {
  it("opens for the same purpose and principal before expiry", async () => {
    const token = await sealState(SECRET, "request-state", "alice", 60_000, { upstream: "alpha", inner: "x" });
    expect(await openState(SECRET, "request-state", "alice", token)).toEqual({
      ok: true,
      value: { upstream: "alpha", inner: "x" },
    });
  });

  it("refuses another principal, another purpose, another secret, expiry, and any altered character", async () => {
    const now = 1_000_000;
    const token = await sealState(SECRET, "request-state", "alice", 60_000, { n: 1 }, now);
    expect(await openState(SECRET, "request-state", "bob", token, now)).toMatchObject({
      ok: false,
      reason: "other-principal",
    });
    expect(await openState(SECRET, "server-request", "alice", token, now)).toMatchObject({
      ok: false,
      reason: "malformed",
    });
    expect(await openState(`${SECRET}x`, "request-state", "alice", token, now)).toMatchObject({
      ok: false,
      reason: "malformed",
    });
    expect(await openState(SECRET, "request-state", "alice", token, now + 60_000)).toMatchObject({
      ok: false,
      reason: "expired",
    });
    // Not the last character: its low bits may be base64url padding the decoder ignores.
    for (const at of [3, 10, 20, token.length - 2]) {
      const altered = token.slice(0, at) + (token[at] === "A" ? "B" : "A") + token.slice(at + 1);
      expect(await openState(SECRET, "request-state", "alice", altered, now)).toMatchObject({ ok: false });
    }
    for (const junk of [undefined, 7, "", "s1.", `s1.${"A".repeat(70_000)}`]) {
      expect(await openState(SECRET, "request-state", "alice", junk, now)).toMatchObject({
        ok: false,
        reason: "malformed",
      });
    }
  });
});

/**
 * The verdict of the `2026/authorization-server` conformance leg
 * (scripts/conformance-auth/authorization-server.mjs): a failed or warned check fails the
 * run unless listed with its reason, and a listed check that passes fails it too (the list
 * of expected failures only shrinks).
 */
import { describe, expect, it } from "vitest";
import { judgeChecks } from "../../scripts/conformance-auth/authorization-server.mjs";

type Check = { id: string; status: string; message?: string };
const check = (id: string, status: string): Check => ({
  id,
  status,
  message: status === "SUCCESS" ? undefined : `${id} went wrong`,
});
const LISTED = { "authorization-code-grant": "a reason a reader can act on" };

describe("the authorization server leg's verdict", () => {
  it.each([
    ["every check passing, none listed", [check("authorization-server-metadata", "SUCCESS")], {}, [], []],
    [
      "a failure not listed",
      [check("authorization-server-metadata", "FAILURE")],
      {},
      ["authorization-server-metadata"],
      [],
    ],
    [
      "a warning not listed",
      [check("authorization-server-metadata-cimd", "WARNING")],
      {},
      ["authorization-server-metadata-cimd"],
      [],
    ],
    ["a listed failure", [check("authorization-code-grant", "FAILURE")], LISTED, [], []],
    [
      "a listed check passing now",
      [check("authorization-code-grant", "SUCCESS")],
      LISTED,
      [],
      ["authorization-code-grant"],
    ],
  ])("%s", (_name, checks, listed, unexpected, stale) => {
    const verdict = judgeChecks(checks, listed);
    expect(verdict.unexpected.map((c: Check) => c.id)).toEqual(unexpected);
    expect(verdict.stale).toEqual(stale);
  });
});

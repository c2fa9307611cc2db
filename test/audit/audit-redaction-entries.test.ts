/**
 * Audit redaction of a header list's `[name, value]` entries (features/audit/redact-parameters.ts)
 * whose value is not a string: a secret's value travels as a list of values
 * (`["Authorization", ["Bearer …"]]`) or an object as readily as a string, and a
 * `{"name": …, "value": …}` pair is redacted whatever its value holds; an entry must be too.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_REDACT_KEYS } from "../../src/features/audit/audit-config";
import { redactParameters } from "../../src/features/audit/redact-parameters";
import { secretKeyMatcher } from "../../src/features/audit/secret-keys";

const isSecret = secretKeyMatcher(DEFAULT_REDACT_KEYS);

describe("a header list's entry", () => {
  it.each([
    ["a list of values", ["Bearer e-111-secret"]],
    ["an object", { scheme: "Bearer", token: "e-222-secret" }],
    ["a number", 31337],
  ])("with a secret name and %s as its value is redacted", (_label, value) => {
    const redacted = redactParameters(
      {
        headers: [
          ["Authorization", value],
          ["Accept", "text/plain"],
        ],
      },
      isSecret,
    );
    expect(redacted).toEqual({
      headers: [
        ["Authorization", "[redacted]"],
        ["Accept", "text/plain"],
      ],
    });
  });

  it("with a name that is no secret keeps its value, whatever it is", () => {
    const entries = [
      ["Accept", ["text/plain", "application/json"]],
      ["X-Count", 3],
    ];
    expect(redactParameters({ headers: entries }, isSecret)).toEqual({ headers: entries });
  });
});

/**
 * What `npm start` says before the gateway runs: when the ADMIN_TOKEN it hands the gateway
 * is too short for the admin surface to open (src/auth/admin-token.ts), from `--var` or an
 * env file, with the command that makes a long one; and, with authentication on, that
 * callers need a persona (authorization is default-deny).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { adminTokenWarning, personaReminder } from "../../scripts/start.mjs";

const dir = mkdtempSync(path.join(tmpdir(), "start-admin-token-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function envFile(text: string): string {
  const file = path.join(dir, `${crypto.randomUUID()}.env`);
  writeFileSync(file, text);
  return file;
}

describe("npm start and a short ADMIN_TOKEN", () => {
  it.each([
    ["--var", ["--var", "ADMIN_TOKEN:short-token"]],
    ["an env file", ["--env-file", envFile('ADMIN_TOKEN="short-token" # too short\n')]],
  ])("warns for one from %s, naming the command that makes a long one", (_, args) => {
    const warning = adminTokenWarning(args);
    expect(warning).toContain("ADMIN_TOKEN is shorter than 32 characters");
    expect(warning).toContain("openssl rand -hex 32");
    expect(warning).not.toContain("short-token");
  });

  it("says nothing for a long one, or none", () => {
    expect(adminTokenWarning(["--var", `ADMIN_TOKEN:${"x".repeat(32)}`])).toBeUndefined();
    expect(adminTokenWarning(["--env-file", envFile(`ADMIN_TOKEN=${"y".repeat(64)}\n`)])).toBeUndefined();
    expect(adminTokenWarning(["--env-file", envFile("AUTH={}\n")])).toBeUndefined();
  });
});

describe("npm start with authentication on", () => {
  it.each([
    ["--var", ["--var", 'AUTH:{"apiKeys":true}'], {}],
    ["the environment", [], { AUTH: '{"jwt":{}}' }],
    ["an env file", ["--env-file", envFile('AUTH={"apiKeys": true}\n')], {}],
  ])("says from %s that callers need a persona", (_, args, environment) => {
    const reminder = personaReminder(args, environment);
    expect(reminder).toContain("default deny");
    expect(reminder).toContain("PUT /admin/personas/<name>");
  });

  it("says nothing with AUTH off or unset", () => {
    expect(personaReminder(["--var", 'AUTH:{"mode":"off"}'], {})).toBeUndefined();
    expect(personaReminder(["--env-file", envFile("UPSTREAMS=[]\n")], {})).toBeUndefined();
  });
});

/**
 * `npm run deploy` (scripts/deploy.mjs) against a fake `wrangler` on PATH that plays a
 * Cloudflare account (test/fixtures/fake-wrangler.mjs): what it creates, in which order,
 * what it refuses, and that a dry run needs no account. Each test works on a copy of
 * the repository's wrangler.toml in a temporary directory.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const AUTH_LINE = `AUTH = '{"apiKeys": true}'`;

type Account = {
  loggedIn: boolean;
  kv: { id: string; title: string }[];
  buckets: string[];
  queues: string[];
  secrets: string[];
  workerExists?: boolean;
  secretListError?: string;
  bundleBytes?: number;
  moduleBytes?: Record<string, number>;
  deployError?: string;
};
type Call = { args: string[]; secretNames?: string[]; secretsFileMode?: string };

let dir: string;
let config: string;

/** The repository's wrangler.toml, with `AUTH` set unless `auth` is false, and `extraVars` lines in [vars]. */
function writeConfig({ auth = true, extraVars = [] as string[] } = {}): void {
  const lines = [...(auth ? [AUTH_LINE] : []), ...extraVars].join("\n");
  writeFileSync(
    config,
    readFileSync(path.join(ROOT, "wrangler.toml"), "utf8").replace(/^\[vars\]$/m, `[vars]\n${lines}`),
  );
}

/** The config with `upstreams` as its only UPSTREAMS (the demo's line removed). */
function writeUpstreams(upstreams: unknown[], { auth = true } = {}): void {
  writeConfig({ auth, extraVars: [`UPSTREAMS = '${JSON.stringify(upstreams)}'`] });
  writeFileSync(config, readFileSync(config, "utf8").replace(/^UPSTREAMS = '\[\{"name":"demo".*$/m, ""));
}

function run(
  account: Account,
  args: string[] = [],
): { status: number | null; output: string; calls: Call[]; account: Account } {
  const state = path.join(dir, "account.json");
  const log = path.join(dir, "calls.ndjson");
  writeFileSync(state, JSON.stringify(account));
  writeFileSync(log, "");
  const result = spawnSync(process.execPath, [path.join(ROOT, "scripts", "deploy.mjs"), "--config", config, ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${path.join(dir, "bin")}${path.delimiter}${process.env["PATH"]}`,
      FAKE_WRANGLER_STATE: state,
      FAKE_WRANGLER_LOG: log,
    },
  });
  const calls = readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Call);
  return {
    status: result.status,
    output: `${result.stdout}${result.stderr}`,
    calls,
    account: JSON.parse(readFileSync(state, "utf8")) as Account,
  };
}

/** A call's arguments as one line without the `-c <config>` every call about the gateway carries. */
const commandOf = (call: Call) =>
  call.args
    .filter((arg, i, all) => !(arg === "-c" && all[i + 1] === config) && !(arg === config && all[i - 1] === "-c"))
    .join(" ");
const FRESH: Account = { loggedIn: true, kv: [], buckets: [], queues: [], secrets: [], workerExists: false };

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "deploy-test-"));
  config = path.join(dir, "wrangler.toml");
  const bin = path.join(dir, "bin");
  spawnSync("mkdir", [bin]);
  copyFileSync(path.join(ROOT, "test", "fixtures", "fake-wrangler.mjs"), path.join(bin, "wrangler"));
  chmodSync(path.join(bin, "wrangler"), 0o755);
  writeConfig();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("npm run deploy", () => {
  it("on a fresh account creates everything in order, writes the KV id into the config and deploys with generated secrets", () => {
    const { status, output, calls, account } = run(FRESH, ["--generate-secrets"]);
    expect(status, output).toBe(0);
    expect(calls.map(commandOf)).toEqual([
      "whoami --json",
      "kv namespace list",
      "kv namespace create mcp-edge-gateway-GATEWAY_KV",
      "kv namespace list",
      "r2 bucket info mcp-edge-gateway-payloads",
      "r2 bucket create mcp-edge-gateway-payloads",
      "queues info mcp-edge-gateway-audit",
      "queues create mcp-edge-gateway-audit",
      "queues info mcp-edge-gateway-audit-dlq",
      "queues create mcp-edge-gateway-audit-dlq",
      "secret list --format json",
      `deploy -c ${path.join(ROOT, "demo", "wrangler.toml")}`,
      expect.stringMatching(/^deploy --secrets-file .*secrets\.json$/),
    ]);
    const kvId = account.kv[0]!.id;
    expect(readFileSync(config, "utf8")).toContain(`id = "${kvId}"`);
    expect(readFileSync(config, "utf8")).not.toContain("REPLACE_WITH_YOUR_KV_NAMESPACE_ID");
    const deploy = calls.at(-1)!;
    expect(deploy.secretNames?.sort()).toEqual(["ADMIN_TOKEN", "SESSION_SECRET"]);
    expect(deploy.secretsFileMode).toBe("600");
    // The file of generated secrets is gone, and no generated secret but the admin token is printed.
    expect(existsSync(deploy.args[deploy.args.indexOf("--secrets-file") + 1]!)).toBe(false);
    expect(output).toMatch(/ADMIN_TOKEN \(shown once/);
    expect(output).not.toMatch(/SESSION_SECRET[^\n]*[0-9a-f]{64}/);
  });

  it("on a partly set-up account creates only what is missing, and a second run creates nothing", () => {
    const account: Account = {
      loggedIn: true,
      kv: [{ id: "a".repeat(32), title: "mcp-edge-gateway-GATEWAY_KV" }],
      buckets: ["mcp-edge-gateway-payloads"],
      queues: ["mcp-edge-gateway-audit"],
      secrets: ["SESSION_SECRET", "ADMIN_TOKEN"],
    };
    const first = run(account);
    expect(first.status, first.output).toBe(0);
    const creates = (calls: Call[]) => calls.map(commandOf).filter((command) => command.includes("create"));
    expect(creates(first.calls)).toEqual(["queues create mcp-edge-gateway-audit-dlq"]);
    expect(readFileSync(config, "utf8")).toContain(`id = "${"a".repeat(32)}"`);
    expect(first.calls.at(-1)!.args).not.toContain("--secrets-file");

    const second = run(first.account);
    expect(second.status, second.output).toBe(0);
    expect(creates(second.calls)).toEqual([]);
    expect(second.calls.map(commandOf).filter((command) => command.startsWith("deploy"))).toHaveLength(2);
  });

  it("finds a KV namespace titled by its binding, as the manual steps created it", () => {
    const { status, output, calls } = run({
      ...FRESH,
      kv: [{ id: "b".repeat(32), title: "GATEWAY_KV" }],
      secrets: ["SESSION_SECRET"],
      workerExists: true,
    });
    expect(status, output).toBe(0);
    expect(calls.map(commandOf)).not.toContain("kv namespace create mcp-edge-gateway-GATEWAY_KV");
    expect(readFileSync(config, "utf8")).toContain(`id = "${"b".repeat(32)}"`);
  });

  it("names each missing secret with its command and deploys nothing", () => {
    writeConfig({
      extraVars: [
        `UPSTREAMS = '[{"name":"gh","url":"https://example.com/mcp","credential":{"secret":"GH_TOKEN"},"identity":{"header":"X-MCP-Identity"}},{"name":"wiki","url":"https://wiki.example.com/mcp","auth":{"type":"tokenExchange","tokenEndpoint":"https://idp.example.com/token","clientId":"gw","clientSecret":"WIKI_EXCHANGE_SECRET"}}]'`,
      ],
    });
    // [vars] now holds two UPSTREAMS lines; keep the one this test wrote.
    writeFileSync(config, readFileSync(config, "utf8").replace(/^UPSTREAMS = '\[\{"name":"demo".*$/m, ""));
    const { status, output, calls } = run(FRESH);
    expect(status).toBe(1);
    for (const name of ["SESSION_SECRET", "IDENTITY_SIGNING_KEY", "GH_TOKEN", "WIKI_EXCHANGE_SECRET"])
      expect(output).toContain(`npx wrangler secret put ${name}`);
    expect(output).toMatch(/ADMIN_TOKEN is not set/);
    expect(calls.map(commandOf).some((command) => command.startsWith("deploy"))).toBe(false);
  });

  it.each([
    ["unset", false, [] as string[]],
    ["off", false, [`AUTH = '{"mode":"off"}'`]],
  ])("refuses with AUTH %s before touching the account, unless --open", (_, auth, extraVars) => {
    writeConfig({ auth, extraVars });
    const refused = run(FRESH, ["--generate-secrets"]);
    expect(refused.status).toBe(1);
    expect(refused.output).toMatch(/refusing to deploy: AUTH/);
    expect(refused.output).toContain("--open");
    expect(refused.calls).toEqual([]);

    const open = run(FRESH, ["--generate-secrets", "--open"]);
    expect(open.status, open.output).toBe(0);
    expect(open.calls.at(-1)!.args[0]).toBe("deploy");
  });

  it("generates nothing and deploys nothing when the secret list fails for another reason than a new Worker", () => {
    const deployed: Account = {
      loggedIn: true,
      kv: [{ id: "c".repeat(32), title: "mcp-edge-gateway-GATEWAY_KV" }],
      buckets: ["mcp-edge-gateway-payloads"],
      queues: ["mcp-edge-gateway-audit", "mcp-edge-gateway-audit-dlq"],
      secrets: ["SESSION_SECRET", "ADMIN_TOKEN"],
      workerExists: true,
      secretListError: "Authentication error [code: 10000]",
    };
    const { status, output, calls } = run(deployed, ["--generate-secrets"]);
    expect(status).toBe(1);
    expect(output).toMatch(/Listing the Worker's secrets failed/);
    expect(output).toContain("Authentication error [code: 10000]");
    expect(calls.map(commandOf).some((command) => command.startsWith("deploy"))).toBe(false);
  });

  it("stops when wrangler is not logged in", () => {
    const { status, output, calls } = run({ ...FRESH, loggedIn: false });
    expect(status).toBe(1);
    expect(output).toContain("npx wrangler login");
    expect(calls.map(commandOf)).toEqual(["whoami --json"]);
  });

  it("--dry-run makes no account call, builds the bundle and holds it to its budget", () => {
    writeConfig({ auth: false });
    const within = run({ ...FRESH, loggedIn: false, bundleBytes: 100 * 1024 }, ["--dry-run"]);
    expect(within.status, within.output).toBe(0);
    expect(within.calls.map(commandOf)).toEqual([expect.stringMatching(/^deploy --dry-run --outdir /)]);
    expect(within.output).toMatch(/a real deploy would stop here/);
    expect(within.output).toMatch(/bundle: 100\.0 KiB main module \(budget 642 KiB\)/);

    const over = run({ ...FRESH, bundleBytes: 2000 * 1024 }, ["--dry-run", "--bundle-budget-kib", "1000"]);
    expect(over.status).toBe(1);
    expect(over.output).toMatch(/the main module is 2000\.0 KiB, over its budget of 1000 KiB/);
  });

  it("says whether code mode's Worker Loader is bound, and why a deploy the account refuses for it failed", () => {
    const dry = run({ ...FRESH, loggedIn: false }, ["--dry-run"]);
    expect(dry.status, dry.output).toBe(0);
    expect(dry.output).toMatch(/code mode: on \(a Worker Loader is bound as LOADER\)/);

    writeUpstreams([{ name: "docs", url: "https://mcp.example.com/mcp" }]);
    const words = "binding LOADER of type worker_loader is not enabled for this account [code: 10021]";
    const refused = run({ ...FRESH, deployError: words }, ["--generate-secrets"]);
    expect(refused.status).toBe(1);
    expect(refused.output).toContain(words);
    expect(refused.output).toMatch(/account may not have the Worker Loader that code mode uses/);
    // The generated secrets' file is gone even though the deploy failed.
    const deploy = refused.calls.at(-1)!;
    expect(existsSync(deploy.args[deploy.args.indexOf("--secrets-file") + 1]!)).toBe(false);

    writeFileSync(config, readFileSync(config, "utf8").replace(/^\[\[worker_loaders\]\]\nbinding = "LOADER"$/m, ""));
    const off = run({ ...FRESH, loggedIn: false }, ["--dry-run"]);
    expect(off.output).toMatch(/code mode: off \(no \[\[worker_loaders\]\] binding named LOADER\)/);
  });

  it("--dry-run holds the main module and everything uploaded to budgets of their own, source maps not counted", () => {
    writeConfig({ auth: false });
    const split = {
      ...FRESH,
      loggedIn: false,
      bundleBytes: 500 * 1024,
      moduleBytes: { "yaml-module.mjs": 100 * 1024 },
    };
    const within = run(split, ["--dry-run"]);
    expect(within.status, within.output).toBe(0);
    expect(within.output).toMatch(
      /bundle: 500\.0 KiB main module \(budget 642 KiB\); 600\.0 KiB uploaded in all \(budget 1180 KiB\): index\.js 500\.0, yaml-module\.mjs 100\.0/,
    );

    const over = run(split, ["--dry-run", "--upload-budget-kib", "550"]);
    expect(over.status).toBe(1);
    expect(over.output).toMatch(/the modules uploaded are 600\.0 KiB in all, over their budget of 550 KiB/);
  });

  describe("warns where a deploy would not work as meant", () => {
    it.each([
      ["http://127.0.0.1:3000/mcp", "a loopback address"],
      ["http://localhost:3000/mcp", "a loopback name"],
      ["http://[::1]:3000/mcp", "a loopback address"],
      ["http://10.0.0.5/mcp", "a private address (10.0.0.0/8)"],
      ["https://172.20.1.1/mcp", "a private address (172.16.0.0/12)"],
      ["http://192.168.1.20:8080/mcp", "a private address (192.168.0.0/16)"],
      ["http://[fd12::1]/mcp", "a private address (fc00::/7)"],
      ["http://169.254.169.254/mcp", "a link-local address"],
      ["http://nas.local/mcp", "a local network name"],
    ])("an upstream at %s (%s)", (url, what) => {
      writeUpstreams([
        { name: "mine", url },
        { name: "public", url: "https://mcp.example.com/mcp" },
      ]);
      const { status, output } = run({ ...FRESH, loggedIn: false }, ["--dry-run"]);
      expect(status, output).toBe(0);
      expect(output).toContain(
        `[deploy] warning: upstream "mine" is at ${new URL(url).origin}, ${what}: a deployed gateway runs on Cloudflare`,
      );
      expect(output).not.toContain('upstream "public"');
    });

    it("an unreachable upstream in a real deploy too, which goes on", () => {
      writeUpstreams([{ name: "mine", url: "http://127.0.0.1:3000/mcp" }]);
      const { status, output, calls } = run({ ...FRESH, secrets: ["SESSION_SECRET"], workerExists: true });
      expect(status, output).toBe(0);
      expect(output).toContain('[deploy] warning: upstream "mine" is at http://127.0.0.1:3000, a loopback address');
      expect(calls.at(-1)!.args[0]).toBe("deploy");
    });

    it("the demo upstream going out with the gateway, in the dry run too", () => {
      const demo = run({ ...FRESH, loggedIn: false }, ["--dry-run"]);
      expect(demo.status, demo.output).toBe(0);
      expect(demo.output).toMatch(
        /warning: UPSTREAMS still uses the demo upstream: a deploy also deploys demo\/ as the Worker "mcp-edge-gateway-demo"/,
      );

      writeUpstreams([{ name: "public", url: "https://mcp.example.com/mcp" }]);
      const own = run({ ...FRESH, loggedIn: false }, ["--dry-run"]);
      expect(own.status, own.output).toBe(0);
      expect(own.output).not.toMatch(/warning/);
    });

    it("--open with AUTH unset, which deploys a gateway that refuses every request", () => {
      writeUpstreams([{ name: "public", url: "https://mcp.example.com/mcp" }], { auth: false });
      const dry = run({ ...FRESH, loggedIn: false }, ["--dry-run", "--open"]);
      expect(dry.status, dry.output).toBe(0);
      expect(dry.output).toContain(
        "warning: --open does not open a gateway whose AUTH is unset: deployed, it refuses every MCP request",
      );
      expect(dry.output).toContain(`set AUTH = '{"mode":"off"}'`);
      const real = run({ ...FRESH, secrets: ["SESSION_SECRET"], workerExists: true }, ["--open"]);
      expect(real.status, real.output).toBe(0);
      expect(real.output).toContain("warning: --open does not open a gateway whose AUTH is unset");

      // With AUTH off, --open does what it says: no such warning.
      writeUpstreams([{ name: "public", url: "https://mcp.example.com/mcp" }], { auth: false });
      writeFileSync(config, readFileSync(config, "utf8").replace(/^\[vars\]$/m, `[vars]\nAUTH = '{"mode":"off"}'`));
      const off = run({ ...FRESH, loggedIn: false }, ["--dry-run", "--open"]);
      expect(off.output).not.toContain("--open does not open");
      expect(off.output).toMatch(/a real deploy would go ahead \(--open\): AUTH is \{"mode":"off"\}/);
    });
  });
});

/**
 * What `npm run conformance` prints of the `2026/auth` leg (./leg.mjs): a row per
 * scenario, the expected failures with their reasons, and what fails the run.
 */
import { AUTH_LEG } from "./leg.mjs";

/** Longest message line shown per failing check (all of it is in the scenario's checks.json). */
const MESSAGE_CHARS = 300;
const LISTED_IN = "scripts/conformance-auth/expected-failures.mjs and docs/upstream-sign-in.md";

function verdict(result) {
  if (result.passed) return "pass";
  return result.judgement.unexpected.length === 0 ? "expected failure" : "FAIL";
}

/**
 * Prints the leg's table and what failed; returns the lines that make the run fail
 * (unexpected failures, stale entries of the expected failures), empty when it may pass.
 */
export function reportAuthLeg(results) {
  const width = Math.max("scenario".length, ...results.map((r) => r.scenario.length));
  console.log(`${"scenario".padEnd(width)}  checks  warnings  client  result`);
  for (const r of results) {
    const checks = `${r.successes}/${r.successes + r.failures}`.padEnd(6);
    const client = (r.clientProblem ? "failed" : "ok").padEnd(6);
    const warnings = String(r.warnings).padEnd(8);
    console.log(`${r.scenario.padEnd(width)}  ${checks}  ${warnings}  ${client}  ${verdict(r)}`);
  }
  const passed = results.filter((r) => r.passed).length;
  console.log(`\n${AUTH_LEG}: scenarios ${passed}/${results.length} passed`);

  const expected = results.filter((r) => r.judgement.expected.length > 0);
  if (expected.length > 0) {
    console.log(`\nExpected failures (${LISTED_IN}) — ${expected.length}, by reason:`);
    for (const reason of new Set(expected.map((r) => r.judgement.reason))) {
      console.log(`  ${reason}:`);
      for (const r of expected.filter((e) => e.judgement.reason === reason)) {
        console.log(`    ${r.scenario}: ${r.judgement.expected.map((c) => c.name).join(", ")}`);
      }
    }
  }
  const failing = [];
  for (const r of results) {
    for (const c of r.judgement.unexpected) {
      failing.push(`${r.scenario}: ${c.name}: ${c.message.split("\n")[0].slice(0, MESSAGE_CHARS)}`);
    }
    for (const name of r.judgement.stale) {
      failing.push(`${r.scenario}: ${name} is listed but passes: remove it from ${LISTED_IN}`);
    }
  }
  if (failing.length > 0) {
    console.log(`\n${AUTH_LEG}: FAILED — ${failing.length}:\n  ${failing.join("\n  ")}`);
    console.log(`  (each scenario's checks.json, stdout.txt and stderr.txt are under ${AUTH_LEG}/ in the results)`);
  }
  return failing;
}

#!/usr/bin/env node
/**
 * What the Worker's bundle is made of: builds it the way `npm run deploy -- --dry-run` does
 * (`wrangler deploy --dry-run --outdir <tmp>`) and prints, per npm package and per `src/`
 * folder, the main module's minified bytes and what they gzip to, attributed through its
 * source map; then each module uploaded beside it (yaml: scripts/build-yaml-module.mjs),
 * whole, and the total. The dry run only says the totals; this says where to look when
 * they grow.
 *
 *   node scripts/bundle-report.mjs              # build, then report
 *   node scripts/bundle-report.mjs --dir <dir>  # report on an existing --outdir (index.js, index.js.map, other modules)
 *
 * Each part's gzip figure is its own bytes compressed alone, so the parts add up to more
 * than the whole file's gzip (printed after them).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { bundleModules, MAIN_MODULE } from "./lib/bundle-modules.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT_OF = new Map([...BASE64].map((char, index) => [char, index]));
/** Parts smaller than this are summed into one line. */
const SMALL_PART_BYTES = 1_024;
/** Width of the first column, in characters. */
const NAME_COLUMN = 30;

/** The numbers of one source-map segment (base64 VLQ). */
function decodeSegment(segment) {
  const values = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = DIGIT_OF.get(char);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return values;
}

/** The part a source belongs to: its npm package, its folder under src/, or its feature (src/features/<feature>). */
function partOf(source) {
  const inPackage = source.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (inPackage) return inPackage[1];
  const at = source.indexOf("src/");
  if (at < 0) return "(other)";
  const [folder, feature] = source.slice(at + 4).split("/");
  return folder === "features" && feature ? `src/features/${feature}` : `src/${folder}`;
}

/** The bundle's text split by the part each byte came from. */
function textByPart(code, map) {
  const parts = new Map();
  const add = (part, text) => parts.set(part, (parts.get(part) ?? "") + text);
  const lines = code.split("\n");
  let source = 0;
  map.mappings.split(";").forEach((mappings, lineIndex) => {
    const line = lines[lineIndex] ?? "";
    const starts = [];
    let column = 0;
    for (const segment of mappings.split(",")) {
      if (segment === "") continue;
      const values = decodeSegment(segment);
      column += values[0];
      if (values.length > 1) source += values[1];
      starts.push({ column, part: values.length > 1 ? partOf(map.sources[source]) : "(other)" });
    }
    add("(other)", `${line.slice(0, starts[0]?.column ?? line.length)}\n`);
    starts.forEach(({ column: start, part }, index) =>
      add(part, line.slice(start, starts[index + 1]?.column ?? line.length)),
    );
  });
  return parts;
}

function kib(bytes) {
  return `${(bytes / 1024).toFixed(1)} KiB`.padStart(10);
}

function report(dir) {
  const code = readFileSync(path.join(dir, MAIN_MODULE), "utf8");
  const map = JSON.parse(readFileSync(path.join(dir, `${MAIN_MODULE}.map`), "utf8"));
  const rows = [...textByPart(code, map)].map(([part, text]) => ({
    part,
    bytes: Buffer.byteLength(text),
    gzip: gzipSync(text, { level: 9 }).length,
  }));
  rows.sort((a, b) => b.bytes - a.bytes);
  const small = rows.filter((row) => row.bytes < SMALL_PART_BYTES);
  console.log(`${"part".padEnd(NAME_COLUMN)}${"minified".padStart(10)}${"gzip".padStart(10)}`);
  for (const row of rows.filter((r) => r.bytes >= SMALL_PART_BYTES))
    console.log(`${row.part.padEnd(NAME_COLUMN)}${kib(row.bytes)}${kib(row.gzip)}`);
  if (small.length > 0)
    console.log(
      `${`(${small.length} smaller parts)`.padEnd(NAME_COLUMN)}${kib(small.reduce((sum, row) => sum + row.bytes, 0))}`,
    );
  console.log(
    `${`${MAIN_MODULE} (main module)`.padEnd(NAME_COLUMN)}${kib(Buffer.byteLength(code))}${kib(gzipSync(code, { level: 9 }).length)}`,
  );
  const { modules, totalBytes } = bundleModules(dir);
  for (const module of modules.slice(1))
    console.log(
      `${`${module.name} (on demand)`.padEnd(NAME_COLUMN)}${kib(module.bytes)}${kib(gzipSync(readFileSync(module.path), { level: 9 }).length)}`,
    );
  if (modules.length > 1) console.log(`${"uploaded in all".padEnd(NAME_COLUMN)}${kib(totalBytes)}`);
}

const { values: options } = parseArgs({ options: { dir: { type: "string" } } });
if (options.dir) {
  report(path.resolve(options.dir));
} else {
  const outdir = mkdtempSync(path.join(tmpdir(), "gateway-bundle-report-"));
  try {
    // node_modules/.bin first, as `npm run` does: wrangler wants the project's Node, not the system's.
    const bin = path.join(ROOT, "node_modules", ".bin");
    const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` };
    const run = spawnSync("wrangler", ["deploy", "--dry-run", "--outdir", outdir], {
      cwd: ROOT,
      encoding: "utf8",
      env,
    });
    if (run.status !== 0) {
      console.error(`wrangler deploy --dry-run failed:\n${(run.stderr || run.stdout).trim()}`);
      process.exitCode = 1;
    } else {
      report(outdir);
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

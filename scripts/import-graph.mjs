#!/usr/bin/env node
/**
 * The import graph of src/: cycles between files and between folders (issue 33).
 *
 *   node scripts/import-graph.mjs [DIR]     (DIR defaults to this checkout's src/)
 *
 * Every relative import counts: static (`import … from`, `import "…"`), dynamic
 * (`import("…")`, `typeof import("…")`), re-exports (`export … from`) and type-only ones,
 * since a cycle of types is still two places that must change together. A folder is the
 * first path segment under DIR, except that each `features/<name>/` is a folder of its own.
 * It prints each cycle with the imports that close it and exits 1 when there is any (0 when
 * there is none, 2 when DIR is not a directory). `npm run check` runs it; CI runs that.
 *
 *   node scripts/import-graph.mjs --allow-feature-cycles [DIR]
 *
 * prints the cycles whose folders are all features (`features/a` ↔ `features/b`) as
 * "feature cycle (allowed for now)" and does not fail on them; a cycle through any folder of
 * the skeleton still fails. `npm run check` no longer passes it: the features were untangled
 * (issue 33), so a new cycle between features fails the check.
 *
 * The work is linear in the size of the tree: one lexer pass per file (it knows comments,
 * strings, template literals and regular expressions, so an `import` in a comment or a
 * string is not an edge), then Tarjan's strongly connected components over files and over
 * folders, then one breadth-first walk inside each component to print a concrete cycle.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { importedSpecifiers } from "./lib/import-specifiers.mjs";

/** The files that hold code; `.d.ts`/`.d.mts` count, since types are imported from them. */
const CODE_FILE = /\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
/** Generated bundles (scripts/build-yaml-module.mjs writes them, .gitignore lists them): third-party code. */
const GENERATED_FILE = /-module\.mjs$/;
/** How a specifier without its extension is completed, in the order TypeScript's bundler resolution tries. */
const COMPLETIONS = [".ts", ".tsx", ".d.ts", ".mts", ".d.mts", ".js", ".mjs", "/index.ts", "/index.tsx", "/index.js"];
/** A specifier naming the emitted file (`./x.js`, `./x.mjs`) may mean its source or its declarations. */
const EMITTED_TO_SOURCE = [
  [/\.js$/, [".ts", ".tsx", ".d.ts"]],
  [/\.mjs$/, [".mts", ".d.mts"]],
];

/** Every code file under `root`, sorted, generated bundles left out. */
function codeFiles(root) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (CODE_FILE.test(entry.name) && !GENERATED_FILE.test(entry.name)) files.push(full);
    }
  };
  walk(root);
  return files;
}

/** The file of `known` a relative specifier names, or undefined (a package, or a file outside the tree). */
function resolveSpecifier(from, specifier, known) {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [base, ...COMPLETIONS.map((completion) => base + completion)];
  for (const [emitted, sources] of EMITTED_TO_SOURCE) {
    if (emitted.test(base)) candidates.push(...sources.map((source) => base.replace(emitted, source)));
  }
  return candidates.find((candidate) => known.has(candidate));
}

/**
 * Tarjan's strongly connected components, iterative: each node and edge is visited once.
 * @param {string[]} nodes
 * @param {Map<string, string[]>} edges
 * @returns {string[][]} the components, each in the order its nodes were first reached
 */
export function stronglyConnected(nodes, edges) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work = [[root, 0]];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, edge] = frame;
      const targets = edges.get(node) ?? [];
      if (edge < targets.length) {
        frame[1]++;
        const target = targets[edge];
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push([target, 0]);
        } else if (onStack.has(target)) low.set(node, Math.min(low.get(node), index.get(target)));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent[0], Math.min(low.get(parent[0]), low.get(node)));
      if (low.get(node) !== index.get(node)) continue;
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component.reverse());
    }
  }
  return components;
}

/** A shortest cycle through `start` inside `component` (breadth-first), as a list that ends where it starts. */
function cycleThrough(start, component, edges) {
  const inside = new Set(component);
  const parent = new Map();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head];
    for (const target of edges.get(node) ?? []) {
      if (!inside.has(target)) continue;
      if (target === start) {
        const chain = [];
        for (let at = node; at !== start; at = parent.get(at)) chain.push(at);
        return [start, ...chain.reverse(), start];
      }
      if (!parent.has(target)) {
        parent.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}

/** The folder a file belongs to: its first segment under the root, or `features/<name>`. */
function folderOf(relativePath) {
  const segments = relativePath.split("/");
  if (segments.length === 1) return ".";
  if (segments[0] === "features" && segments.length > 2) return `features/${segments[1]}`;
  return segments[0];
}

/**
 * The graph of the tree at `root` and its cycles.
 * @param {string} root
 */
export function importGraph(root) {
  const files = codeFiles(root);
  const known = new Set(files);
  const name = (file) => path.relative(root, file).split(path.sep).join("/");
  const fileEdges = new Map();
  const folderEdges = new Map();
  /** For each folder edge "a → b", the first file import that makes it. */
  const witnesses = new Map();
  let imports = 0;
  for (const file of files) {
    const targets = new Set();
    for (const specifier of importedSpecifiers(readFileSync(file, "utf8"))) {
      const target = resolveSpecifier(file, specifier, known);
      if (target !== undefined) targets.add(name(target));
    }
    const from = name(file);
    fileEdges.set(from, [...targets]);
    imports += targets.size;
    for (const target of targets) {
      const [a, b] = [folderOf(from), folderOf(target)];
      if (a === b) continue;
      if (!folderEdges.has(a)) folderEdges.set(a, []);
      if (!witnesses.has(`${a} → ${b}`)) {
        folderEdges.get(a).push(b);
        witnesses.set(`${a} → ${b}`, `${from} imports ${target}`);
      }
    }
  }
  const cycles = (nodes, edges) =>
    stronglyConnected(nodes, edges)
      .filter((component) => component.length > 1 || (edges.get(component[0]) ?? []).includes(component[0]))
      .map((component) => {
        const members = [...component].sort();
        return { members, cycle: cycleThrough(members[0], component, edges) };
      });
  const fileNames = files.map(name);
  const folders = [...new Set(fileNames.map(folderOf))];
  return {
    files: files.length,
    imports,
    fileCycles: cycles(fileNames, fileEdges),
    folderCycles: cycles(folders, folderEdges),
    witnesses,
  };
}

function main() {
  const args = process.argv.slice(2);
  const allowFeatureCycles = args.includes("--allow-feature-cycles");
  const dir = args.find((arg) => !arg.startsWith("--"));
  const root = path.resolve(dir ?? fileURLToPath(new URL("../src", import.meta.url)));
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
    console.error(`import graph: ${root} is not a directory`);
    process.exit(2);
  }
  const graph = importGraph(root);
  const others = (members, cycle) => {
    if (members.length > cycle.length - 1) console.log(`  (these all reach each other: ${members.join(", ")})`);
  };
  for (const { members, cycle } of graph.fileCycles) {
    console.log(`file cycle: ${cycle.join(" → ")}`);
    others(members, cycle);
  }
  const onlyFeatures = ({ members }) => members.every((folder) => folder.startsWith("features/"));
  const allowed = allowFeatureCycles ? graph.folderCycles.filter(onlyFeatures) : [];
  const failing = graph.folderCycles.filter((cycle) => !allowed.includes(cycle));
  for (const { members, cycle } of graph.folderCycles) {
    console.log(
      `${allowed.some((a) => a.cycle === cycle) ? "feature cycle (allowed for now)" : "folder cycle"}: ${cycle.join(" → ")}`,
    );
    for (let k = 0; k + 1 < cycle.length; k++) {
      const step = `${cycle[k]} → ${cycle[k + 1]}`;
      console.log(`  ${step}: ${graph.witnesses.get(step)}`);
    }
    others(members, cycle);
  }
  const count = (n, what) => `${n} ${what}${n === 1 ? "" : "s"}`;
  console.log(
    `import graph of ${path.relative(process.cwd(), root) || "."}: ${count(graph.files, "file")}, ` +
      `${count(graph.imports, "import")}; ${count(graph.fileCycles.length, "file cycle")}, ` +
      `${count(failing.length, "folder cycle")}` +
      (allowed.length > 0 ? `, ${count(allowed.length, "feature cycle")} allowed for now` : ""),
  );
  process.exit(graph.fileCycles.length + failing.length > 0 ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();

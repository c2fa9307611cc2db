/**
 * scripts/import-graph.mjs, the import-graph step of `npm run check`, on small trees written
 * here: it finds a cycle between files and one between folders (each `features/<name>/` a
 * folder of its own), exits 1 on either, and passes a clean tree whose comments, strings,
 * templates, regular expressions and JSX text mention imports that are not there.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const SCRIPT = path.resolve(import.meta.dirname, "..", "..", "scripts", "import-graph.mjs");
const trees = mkdtempSync(path.join(tmpdir(), "import-graph-"));
afterAll(() => rmSync(trees, { recursive: true, force: true }));

/** Writes the files of a tree (path → text) and runs the script on it. */
function graphOf(
  name: string,
  files: Record<string, string>,
  options: readonly string[] = [],
): { status: number | null; output: string } {
  const root = path.join(trees, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  const run = spawnSync(process.execPath, [SCRIPT, ...options, root], { encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("the import graph", () => {
  it("finds a cycle between two files of one folder, through a type-only import and a re-export", () => {
    const { status, output } = graphOf("file-cycle", {
      "core/a.ts": 'import type { B } from "./b";\nexport type A = { b?: B };\n',
      "core/b.ts": 'export type { A as B } from "./a.ts";\n',
      "core/c.ts": 'import type { A } from "./a";\nexport const c: A = {};\n',
    });
    expect(output).toContain("file cycle: core/a.ts → core/b.ts → core/a.ts");
    expect(output).toContain("1 file cycle, 0 folder cycles");
    expect(status).toBe(1);
  });

  it("finds a cycle between folders that no two files close, through a dynamic import", () => {
    const { status, output } = graphOf("folder-cycle", {
      "config/auth.ts": 'export const load = () => import("../features/sign-in/config");\n',
      "config/secrets.ts": "export const SECRET = 1;\n",
      "features/sign-in/config.ts": "export const signIn = {};\n",
      "features/sign-in/routes.ts": 'import { SECRET } from "../../config/secrets";\nexport const routes = [SECRET];\n',
    });
    expect(output).toContain("folder cycle: config → features/sign-in → config");
    expect(output).toContain("config → features/sign-in: config/auth.ts imports features/sign-in/config.ts");
    expect(output).toContain("features/sign-in → config: features/sign-in/routes.ts imports config/secrets.ts");
    expect(output).toContain("0 file cycles, 1 folder cycle");
    expect(status).toBe(1);
  });

  it("counts each feature as a folder of its own", () => {
    const { status, output } = graphOf("feature-cycle", {
      "features/pins/store.ts": 'export * from "../filters/names";\n',
      "features/pins/names.ts": "export const PIN = 1;\n",
      "features/filters/names.ts": "export const FILTER = 1;\n",
      "features/filters/apply.ts": 'import { PIN } from "../pins/names";\nexport const apply = PIN;\n',
    });
    expect(output).toContain("folder cycle: features/filters → features/pins → features/filters");
    expect(status).toBe(1);
  });

  it("with --allow-feature-cycles, lets features import each other but not the skeleton close a cycle", () => {
    const features = {
      "features/pins/store.ts": 'export * from "../filters/names";\n',
      "features/pins/names.ts": "export const PIN = 1;\n",
      "features/filters/names.ts": "export const FILTER = 1;\n",
      "features/filters/apply.ts": 'import { PIN } from "../pins/names";\nexport const apply = PIN;\n',
    };
    const allowed = graphOf("feature-cycle-allowed", features, ["--allow-feature-cycles"]);
    expect(allowed.output).toContain(
      "feature cycle (allowed for now): features/filters → features/pins → features/filters",
    );
    expect(allowed.output).toContain("0 folder cycles, 1 feature cycle allowed for now");
    expect(allowed.status).toBe(0);
    const throughSkeleton = graphOf(
      "feature-cycle-skeleton",
      {
        ...features,
        "core/a.ts": 'import { PIN } from "../features/pins/names";\nexport const a = PIN;\n',
        "features/pins/names.ts": 'import { a } from "../../core/a";\nexport const PIN = a;\n',
      },
      ["--allow-feature-cycles"],
    );
    expect(throughSkeleton.output).toContain("folder cycle: core → features/pins → core");
    expect(throughSkeleton.status).toBe(1);
  });

  it("passes a tree without cycles, whatever its comments and strings say", () => {
    const { status, output } = graphOf("clean", {
      "core/a.ts": [
        'import { z } from "zod";',
        '// import { b } from "./b";',
        "/* export * from './b'; */",
        "export const text = \"import { b } from './b'\";",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a file that holds a template literal
        "export const template = `\\` import('./b') ${`nested ${text}`}`;",
        "export const quote = /[`'\"]/.test(text) ? 1 / 2 : 0;",
        'import "./side-effect";',
        "export const schema = z.string();",
        "",
      ].join("\n"),
      "core/side-effect.ts": "export {};\n",
      "core/b.ts": 'import { text } from "./a";\nexport const b = text;\n',
      "shell/page.tsx": [
        'import { b } from "../core/b";',
        'export const page = <p>Don\'t import this from "../core/b"</p>;',
        'export const lazy = () => import("../core/a");',
        "export const value = b;",
        "",
      ].join("\n"),
    });
    expect(output).toContain("import graph of");
    expect(output).toContain("4 files, 4 imports; 0 file cycles, 0 folder cycles");
    expect(status).toBe(0);
  });

  it("refuses a directory that is not there", () => {
    const { status, output } = graphOf("missing/none", {});
    expect(output).toContain("is not a directory");
    expect(status).toBe(2);
  });
});

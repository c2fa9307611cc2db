/**
 * A copy of the project as a user gets it, from a git clone or a release archive alike:
 * every file but what .gitignore names (node_modules, .wrangler, a developer's .dev.vars,
 * generated files, results) and .git. test/e2e/quickstart.test.ts runs README's first steps
 * in it; a `git clone` there failed wherever the project is not a git repository.
 */
import { cpSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** Never copied, whatever .gitignore says. */
const ALWAYS_LEFT_OUT = [".git"];

/** A .gitignore line as a test of a path relative to the root ("/"-separated); undefined for blanks and comments. */
function ignoreRule(line: string): ((relative: string) => boolean) | undefined {
  const pattern = line.trim().replace(/\/$/, "");
  if (pattern === "" || pattern.startsWith("#") || pattern.startsWith("!")) return undefined;
  const source = pattern
    .replace(/^\//, "")
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^/]*");
  // A pattern with a "/" before its end is anchored at the root; one without matches a name at any depth.
  const anchored = pattern.replace(/^\//, "").includes("/") || pattern.startsWith("/");
  const regex = new RegExp(anchored ? `^${source}$` : `(^|/)${source}$`);
  return (relative) => regex.test(relative);
}

/** Whether `relative` (a path under the root) is left out of the copy. */
export function releaseFilter(root: string): (relative: string) => boolean {
  const gitignore = path.join(root, ".gitignore");
  const lines = existsSync(gitignore) ? readFileSync(gitignore, "utf8").split("\n") : [];
  const rules = [...ALWAYS_LEFT_OUT, ...lines].map(ignoreRule).filter((rule) => rule !== undefined);
  return (relative) => rules.some((rule) => rule(relative));
}

/**
 * Copies the project at `root` to `destination` as a user gets it (see the header).
 *
 * @example
 * copyReleaseTree(ROOT, mkdtempSync(path.join(tmpdir(), "gateway-copy-")));
 */
export function copyReleaseTree(root: string, destination: string): void {
  const leftOut = releaseFilter(root);
  cpSync(root, destination, {
    recursive: true,
    filter: (source) => {
      const relative = path.relative(root, source).split(path.sep).join("/");
      return relative === "" || !leftOut(relative);
    },
  });
}

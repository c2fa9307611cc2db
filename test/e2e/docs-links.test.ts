/**
 * The docs hold together: every relative link in README.md, ARCHITECTURE.md, CHANGELOG.md
 * and docs/**.md names a file of the repository, and every `#anchor` a heading of the page
 * it points at (GitHub's heading ids). Links to other sites are not followed (no network).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

function markdownFiles(): string[] {
  const files = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"].filter((file) => existsSync(path.join(ROOT, file)));
  const walk = (dir: string) => {
    if (!existsSync(path.join(ROOT, dir))) return;
    for (const entry of readdirSync(path.join(ROOT, dir))) {
      const relative = path.join(dir, entry);
      if (statSync(path.join(ROOT, relative)).isDirectory()) walk(relative);
      else if (entry.endsWith(".md")) files.push(relative);
    }
  };
  walk("docs");
  return files;
}

/** Markdown text without fenced code blocks and inline code (links inside them are not links); lines keep their numbers. */
function prose(text: string): string {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ""))
    .replace(/`[^`\n]*`/g, "");
}

/** GitHub's id for each heading of a page, with -1, -2 ... for repeats. */
function headingIds(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of withoutCode.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) ids.add(match[1]!);
  return ids;
}

type Link = { from: string; target: string; line: number };

function relativeLinks(file: string): Link[] {
  const text = prose(readFileSync(path.join(ROOT, file), "utf8"));
  const links: Link[] = [];
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
      links.push({ from: file, target, line: index + 1 });
    }
  });
  return links;
}

describe("links between the docs", () => {
  const files = markdownFiles();
  const links = files.flatMap(relativeLinks);

  it("finds the pages and their links", () => {
    expect(files).toContain("README.md");
    expect(links.length).toBeGreaterThan(0);
  });

  it("has no dead relative link or anchor", () => {
    const dead: string[] = [];
    for (const { from, target, line } of links) {
      const [file, anchor] = target.split("#") as [string, string | undefined];
      const resolved = file === "" ? from : path.join(path.dirname(from), decodeURIComponent(file));
      const absolute = path.join(ROOT, resolved);
      if (!existsSync(absolute)) {
        dead.push(`${from}:${line}: ${target} (no file ${resolved})`);
        continue;
      }
      if (
        anchor !== undefined &&
        anchor !== "" &&
        resolved.endsWith(".md") &&
        !headingIds(readFileSync(absolute, "utf8")).has(anchor)
      ) {
        dead.push(`${from}:${line}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(dead).toEqual([]);
  });
});

describe("GitHub heading ids", () => {
  it.each([
    ["## Protocol revisions", "protocol-revisions"],
    ["### `UPSTREAMS` (var)", "upstreams-var"],
    ["### What a 2026-07-28 client gets", "what-a-2026-07-28-client-gets"],
    ["### Listening: `subscriptions/listen`", "listening-subscriptionslisten"],
    ["## Oversized results go to R2", "oversized-results-go-to-r2"],
  ])("%s → #%s", (heading, id) => {
    expect(headingIds(heading).has(id)).toBe(true);
  });

  it("numbers repeated headings", () => {
    expect([...headingIds("## Settings\n## Settings\n")]).toEqual(["settings", "settings-1"]);
  });
});

/**
 * Renders the benchmarks' results as plain-text tables for the terminal, and writes the
 * same numbers to a JSON file; nothing here computes anything new.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

export type Cell = string | number;

function cellText(cell: Cell, digits: number): string {
  if (typeof cell === "string") return cell;
  if (Number.isInteger(cell)) return String(cell); // counts
  return Number.isFinite(cell) ? cell.toFixed(digits) : "n/a";
}

/** A table with a header row; text left-aligned, numbers right-aligned with `digits` decimals (integers as they are). */
export function table(headers: readonly string[], rows: readonly (readonly Cell[])[], digits = 2): string {
  const texts = rows.map((row) => row.map((cell) => cellText(cell, digits)));
  const widths = headers.map((h, i) => Math.max(h.length, ...texts.map((row) => row[i]?.length ?? 0)));
  const line = (cells: readonly string[], numeric: readonly boolean[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((row) => typeof row[i] === "number"));
  return [
    line(headers, numeric),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...texts.map((row) => line(row, numeric)),
  ].join("\n");
}

/** A section title followed by its body and a blank line. */
export function section(title: string, body: string): string {
  return `${title}\n${body}\n`;
}

/**
 * Writes a bench's result as `<dir>/<kind>-<timestamp>.json` and says where.
 *
 * @example
 * saveResult("bench/results", "relay", result, result.startedAt);
 */
export function saveResult(dir: string, kind: string, result: unknown, startedAt = new Date().toISOString()): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${kind}-${startedAt.replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`results: ${path.relative(process.cwd(), file)}`);
  return file;
}

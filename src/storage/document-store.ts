/**
 * The KV document store: one validated JSON (or YAML) document per key, read from KV at
 * most once per TTL per isolate and checked on every read, so a document written straight
 * into KV (`wrangler kv key put`) gets the same checks as one written through the admin
 * API. An invalid document is logged and reported as broken, never half-applied. Filter
 * sets and the plan use it; so will personas, visibility and the other live-edited
 * documents.
 */
import { parse as parseYaml } from "yaml";
import { IsolateCopies } from "./isolate-copies";

/** One problem, located by a JSON Pointer into the document. */
export type DocumentProblem = { readonly path: string; readonly message: string };

export type Checked<T> = { ok: true; value: T } | { ok: false; problems: DocumentProblem[] };

/** A stored document: absent, valid, or broken with its problems (and what was parsed of it, if it parsed). */
export type Stored<T> =
  | { readonly state: "absent" }
  | { readonly state: "valid"; readonly value: T }
  | { readonly state: "broken"; readonly problems: readonly DocumentProblem[]; readonly parsed?: unknown };

const copies = new IsolateCopies<Stored<unknown>>();

/** Reads a document written as JSON or YAML (JSON first: it is also YAML, but faster). */
export function parseDocument(text: string): Checked<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // Not JSON; try YAML.
  }
  try {
    return { ok: true, value: parseYaml(text, { maxAliasCount: 100 }) };
  } catch (error) {
    return { ok: false, problems: [{ path: "", message: `neither JSON nor YAML: ${(error as Error).message.split("\n")[0]}` }] };
  }
}

/** Problems as one line, each with where it is. */
export function formatProblems(problems: readonly DocumentProblem[]): string {
  return problems.map((p) => `${p.path || "/"}: ${p.message}`).join("; ");
}

async function read<T>(kv: KVNamespace, key: string, check: (value: unknown) => Checked<T>): Promise<Stored<T>> {
  const text = await kv.get(key);
  if (text === null) return { state: "absent" };
  const parsed = parseDocument(text);
  const checked = parsed.ok ? check(parsed.value) : parsed;
  if (checked.ok) return { state: "valid", value: checked.value };
  console.error(`mcp-edge-gateway: KV document "${key}" is invalid and is not applied: ${formatProblems(checked.problems)}`);
  return { state: "broken", problems: checked.problems, ...(parsed.ok ? { parsed: parsed.value } : {}) };
}

/**
 * The document at `key`, checked by `check`; this isolate's copy while it is younger
 * than `ttlMs` (how copies are refreshed: isolate-copies.ts).
 *
 * @example
 * const plan = await loadDocument(kv, "plan", 30_000, checkPlan);
 */
export function loadDocument<T>(kv: KVNamespace, key: string, ttlMs: number, check: (value: unknown) => Checked<T>): Promise<Stored<T>> {
  return copies.load(key, ttlMs, () => read(kv, key, check)) as Promise<Stored<T>>;
}

/** Drops this isolate's copy of a document (after a write through the admin API). */
export function forgetDocument(key: string): void {
  copies.forget(key);
}

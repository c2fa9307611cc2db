/**
 * The guardrails document as a call sees it: read from KV (key "guardrails") at most once
 * per TTL per isolate, checked and compiled by the engine, which is imported only when a
 * document is stored. An absent document costs one cached KV read and nothing else; an
 * invalid one (written straight into KV) is reported, and the middleware fails closed.
 */
import { IsolateCopies } from "../../storage/isolate-copies";
import { formatProblems, parseDocument, type DocumentProblem } from "../../storage/document-store";
import { loadGuardrailsEngine, type GuardrailsEngine } from "./engine-loader";
import type { Guardrails } from "./document";

/** The KV key of the guardrails document. */
export const GUARDRAILS_KEY = "guardrails";

/** The stored document: absent, valid (with the engine that runs it), or broken. */
export type LoadedGuardrails =
  | { readonly state: "absent" }
  | { readonly state: "valid"; readonly value: Guardrails; readonly engine: GuardrailsEngine }
  | { readonly state: "broken"; readonly problems: readonly DocumentProblem[] };

const copies = new IsolateCopies<LoadedGuardrails>();

async function read(kv: KVNamespace): Promise<LoadedGuardrails> {
  const text = await kv.get(GUARDRAILS_KEY);
  if (text === null) return { state: "absent" };
  const engine = await loadGuardrailsEngine();
  const parsed = await parseDocument(text);
  const checked = parsed.ok ? engine.checkGuardrails(parsed.value) : parsed;
  if (checked.ok) return { state: "valid", value: checked.value, engine };
  console.error(
    `mcp-edge-gateway: KV document "${GUARDRAILS_KEY}" is invalid and every tool call is refused: ` +
      formatProblems(checked.problems),
  );
  return { state: "broken", problems: checked.problems };
}

/** The guardrails in force; without KV there are none. */
export function loadGuardrails(kv: KVNamespace | undefined, ttlMs: number): Promise<LoadedGuardrails> {
  if (!kv) return Promise.resolve({ state: "absent" });
  return copies.load(GUARDRAILS_KEY, ttlMs, () => read(kv));
}

/** Drops this isolate's copy (after a write through the admin API). */
export function forgetGuardrails(): void {
  copies.forget(GUARDRAILS_KEY);
}

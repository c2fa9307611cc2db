/**
 * The guardrails engine (engine.ts), loaded from the module of its own that the Worker
 * uploads beside the main module (storage/guardrails-library.ts says why it is loaded there).
 */
import { loadGuardrailsModule } from "../../storage/guardrails-library";

/** The engine's exports: the module is engine.ts bundled. */
export type GuardrailsEngine = typeof import("./engine");

/** The engine, loaded on first use in this isolate. */
export async function loadGuardrailsEngine(): Promise<GuardrailsEngine> {
  return (await loadGuardrailsModule()) as GuardrailsEngine;
}

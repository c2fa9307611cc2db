/**
 * What the shell is told about pipelines: how a test or an embedder varies one (a rearranged
 * middleware list, call observers), and the builder the composition root (src/chain.ts)
 * provides, so the shell builds a configuration's pipeline without knowing its middleware.
 */
import type { GatewayConfig } from "../config/gateway-config";
import type { Handler } from "../context/call-context";
import type { Layer } from "./compose";
import type { CallObserver } from "./record-calls";

export type PipelineOptions = {
  /** Rearranges the middleware list, each layer with the messages it handles (a test adds a recorder to it). */
  readonly arrange?: (middleware: readonly Layer[]) => readonly Layer[];
  /** Told of each message's completed call record, after the default observers (upstream health). */
  readonly observers?: readonly CallObserver[];
};

/** Builds the pipeline of a configuration: the default one without options, built once per configuration. */
export type PipelineBuilder = (config: GatewayConfig, options?: PipelineOptions) => Handler;

/**
 * Named servers' logic, loaded from the module of its own that the Worker uploads beside the
 * main one (storage/named-servers-library.ts says why it is loaded there). The module bundles
 * its own copies of the pure helpers it uses; anything with isolate-wide state or a class the
 * main module must recognise (GatewayError, the document store, the relay's URI owners) is
 * handed to it by the main module as `MainParts`.
 */
import { loadNamedServersModule } from "../../storage/named-servers-library";
import { GatewayError } from "../../core/errors";
import { knownUriOwner } from "../../relay/relay";
import type { JsonRpcId } from "../../core/jsonrpc";

/** The module's exports: lazy-entry.ts bundled. */
export type NamedServersModule = typeof import("./lazy-entry");

/** What the module gets from the main module. */
export type MainParts = {
  /** A wire error the shell and fronts recognise. */
  readonly error: (status: number, code: number, message: string, data?: unknown, id?: JsonRpcId) => Error;
  /** The upstream this isolate saw serve `uri`, if any (relay/relay.ts). */
  readonly uriOwner: (uri: string) => string | undefined;
};

export const MAIN_PARTS: MainParts = {
  error: (status, code, message, data, id) => new GatewayError(status, code, message, data, id),
  uriOwner: knownUriOwner,
};

/** The module, loaded on first use in this isolate. */
export async function loadNamedServers(): Promise<NamedServersModule> {
  return (await loadNamedServersModule()) as NamedServersModule;
}

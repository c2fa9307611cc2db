/**
 * Named servers' logic, loaded from the module of its own that the Worker uploads beside the
 * main one (storage/named-servers-library.ts says why it is loaded there). The module bundles
 * its own copies of the pure helpers it uses; anything with isolate-wide state or a class the
 * main module must recognise (GatewayError, the document store, the relay's URI owners) is
 * handed to it by the main module as `MainParts`.
 */
import { loadNamedServersModule } from "../../storage/named-servers-library";
import { GatewayError } from "../../core/errors";
import { GatewayFailure } from "../../core/failures";
import { knownUriOwner } from "../../relay/relay";
import type { MainParts } from "./main-parts";

/** The module's exports: lazy-entry.ts bundled. */
export type NamedServersModule = typeof import("./lazy-entry");

/** The main module's parts, handed to the module with each call. */
export const MAIN_PARTS: MainParts = {
  error: (status, code, message, data, id) => new GatewayError(status, code, message, data, id),
  unknownName: (failure, id) => new GatewayFailure(failure, id),
  uriOwner: knownUriOwner,
};

/** The module, loaded on first use in this isolate. */
export async function loadNamedServers(): Promise<NamedServersModule> {
  return (await loadNamedServersModule()) as NamedServersModule;
}

/**
 * What the lazily loaded module gets from the main module with each call: what it must not
 * bundle a copy of, because the main module's own is the one that counts (loader.ts).
 */
import type { JsonRpcId } from "../../core/jsonrpc";
import type { UnknownName } from "../../core/failures";

/** The main module's parts (loader.ts `MAIN_PARTS`). */
export type MainParts = {
  /** A wire error the shell and fronts recognise (the main module's GatewayError). */
  readonly error: (status: number, code: number, message: string, data?: unknown, id?: JsonRpcId) => Error;
  /** A name this server does not serve, as the typed failure layers react to (the main module's GatewayFailure). */
  readonly unknownName: (failure: UnknownName, id: JsonRpcId) => Error;
  /** The upstream this isolate saw serve `uri`, if any (relay/relay.ts). */
  readonly uriOwner: (uri: string) => string | undefined;
};

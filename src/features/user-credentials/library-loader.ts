/**
 * The token exchange and the key page (lazy-entry.ts), loaded from the module of their own
 * the Worker uploads beside the main module (storage/user-credentials-library.ts says why it
 * is loaded there).
 */
import { loadUserCredentialsModule } from "../../storage/user-credentials-library";

/** The module's exports: lazy-entry.ts bundled. */
export type UserCredentialsLibrary = Pick<
  typeof import("./lazy-entry"),
  "exchangedToken" | "forgetExchanged" | "keyRoute"
>;

/** The module, loaded on first use in this isolate. */
export async function loadUserCredentialsLibrary(): Promise<UserCredentialsLibrary> {
  return (await loadUserCredentialsModule()) as UserCredentialsLibrary;
}

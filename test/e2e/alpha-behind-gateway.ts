/**
 * The setup several end-to-end tests share: the SDK upstream alpha on loopback and the
 * gateway started as README says (`npm start`'s wrangler dev) in front of it, for the
 * tests of one `describe`, stopped after them.
 */
import { afterAll, beforeAll } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha } from "../fixtures/sdk-upstream.ts";

/**
 * Starts alpha and a gateway routing to it (as "alpha") before the enclosing tests, with
 * local state under `persistTo`; `url()` is the gateway's origin.
 *
 * @example
 * const gateway = alphaBehindGateway(".wrangler/e2e-x");
 * it("lists", async () => { await client.connect(new Transport(new URL(`${gateway.url()}/mcp`))); });
 */
export function alphaBehindGateway(persistTo: string): { url: () => string } {
  let alpha: Awaited<ReturnType<typeof startAlpha>> | undefined;
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
  beforeAll(async () => {
    alpha = await startAlpha();
    gateway = await startGateway({
      port: await freePort(),
      vars: { UPSTREAMS: [{ name: "alpha", url: alpha.url }] },
      persistTo,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await alpha?.close();
  });
  return {
    url: () => {
      if (!gateway) throw new Error("the gateway has not started");
      return gateway.url;
    },
  };
}

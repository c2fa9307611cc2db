/**
 * The console's Servers page, mounted in the main module: its routes and the frame the page
 * (console-page.ts, in the module loaded on demand) writes into: the console's layout, the
 * catalog listed through the gateway's upstream pool (as the Tools page lists it) and
 * filters' bytes-per-token estimate.
 */
import type { ConsoleApp, ConsoleContext } from "../../admin/console/context";
import { ABSENT_ETAG, errorOf } from "../../admin/console/admin-client";
import { href } from "../../admin/console/layout";
import { renderPage, statusOf } from "../../admin/console/render";
import { gatewayConfig } from "../../config/gateway-config";
import { upstreamCatalog } from "../catalog/console-catalog";
import { BYTES_PER_TOKEN } from "../filters/apply-filter";
import type { ServersFrame } from "./console-page";
import { loadNamedServers } from "./loader";

async function catalog(c: ConsoleContext) {
  const parsed = gatewayConfig(c.env).upstreams;
  return Promise.all((parsed.ok ? parsed.value : []).map((upstream) => upstreamCatalog(upstream, c.env)));
}

const FRAME: ServersFrame = {
  render: renderPage,
  statusOf,
  href,
  errorOf,
  absentEtag: ABSENT_ETAG,
  bytesPerToken: BYTES_PER_TOKEN,
  catalog,
};

/** Adds the Servers page: the list, a server's editor and its save. */
export function registerServersPage(app: ConsoleApp): void {
  app.get("/servers", async (c) => {
    const open = c.req.query("open");
    if (open) return c.redirect(href(`/servers/${encodeURIComponent(open)}`), 303);
    return (await loadNamedServers()).serversPage(c, FRAME);
  });
  app.get("/servers/:name", async (c) => (await loadNamedServers()).serverEditor(c, FRAME, c.req.param("name")));
  app.post("/servers/:name", async (c) =>
    (await loadNamedServers()).saveServerFromConsole(c, FRAME, c.req.param("name")),
  );
}

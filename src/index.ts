/**
 * mcp-edge-gateway: the Worker entry point.
 */
import { createApp, type GatewayBindings } from "./shell/app";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<GatewayBindings>;

/**
 * What the gateway calls itself: its serverInfo on /mcp, its clientInfo upstream, `GET /`.
 * The version is package.json's (the one CHANGELOG.md names), so a release changes it in
 * one place.
 */
import { version } from "../../package.json";

export const GATEWAY_INFO = { name: "mcp-edge-gateway", version } as const;

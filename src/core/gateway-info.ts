/** What the gateway calls itself: its serverInfo on /mcp, its clientInfo upstream, `GET /`. */
export const GATEWAY_INFO = { name: "mcp-edge-gateway", version: "0.1.0" } as const;

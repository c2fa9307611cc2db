/**
 * `requestOrigin` (front/http/endpoint-request.ts) reads a request URL's origin off the
 * serialized URL instead of parsing it for each message: it must say what `URL.origin`
 * says, for the URLs the runtime hands a Worker and for any other it is given.
 */
import { describe, expect, it } from "vitest";
import { requestOrigin } from "../../src/front/http/endpoint-request";

describe("requestOrigin", () => {
  it.each([
    "https://gw.example/mcp",
    "https://gw.example/mcp/alpha?catalog=search",
    "http://127.0.0.1:8787/mcp/raw",
    "http://[::1]:8787/mcp",
    "http://localhost/",
    "https://gw.example:8443/mcp?x=https://other.example/",
    "http://user:secret@gw.example/mcp",
    "https://gw.example/mcp/a@b",
    "HTTP://GW.EXAMPLE:80/mcp",
    "wss://gw.example/mcp",
    "file:///tmp/x",
  ])("%s: as URL.origin", (url) => {
    expect(requestOrigin(url)).toBe(new URL(url).origin);
  });

  it("reads a request's own URL as URL.origin does", () => {
    const request = new Request("HTTPS://GW.Example:443/mcp/alpha?catalog=search");
    expect(requestOrigin(request.url)).toBe("https://gw.example");
  });
});

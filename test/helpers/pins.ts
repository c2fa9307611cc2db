/**
 * Tool pinning tests: an upstream of test/fixtures/pins-upstream.ts under a name of the
 * test's own (pins are kept per upstream name, so tests never share them), switched
 * between variants, listed and called like a client would.
 */
import { inject } from "vitest";
import { initialize, request, type Json, type Vars } from "./gateway";
import { ADMIN_VARS } from "./admin";

export type PinSetup = {
  readonly name: string;
  readonly pinning?: "off" | "warn" | "enforce";
  readonly approveNew?: boolean;
  readonly withBeta?: boolean;
};

/** The vars of a gateway whose upstreams are `setup.name` (the pins fixture under its own label) and, if asked, beta. */
export function pinVars(setup: PinSetup): Vars {
  const upstreams: unknown[] = [
    {
      name: setup.name,
      url: `${inject("pinsUpstreamUrl")}/${setup.name}/mcp`,
      ...(setup.pinning ? { pinning: setup.pinning } : {}),
      ...(setup.approveNew ? { approveNew: true } : {}),
    },
  ];
  if (setup.withBeta) upstreams.push({ name: "beta", url: inject("fixtureUrls").beta, pinning: "off" });
  return { UPSTREAMS: JSON.stringify(upstreams), ADMIN_TOKEN: ADMIN_VARS["ADMIN_TOKEN"] };
}

/** Switches the fixture upstream `label` to `variant`. */
export async function switchVariant(label: string, variant: string): Promise<void> {
  const response = await fetch(`${inject("pinsUpstreamUrl")}/${label}/variant/${variant}`, { method: "POST" });
  if (response.status !== 200) throw new Error(`variant ${variant}: ${response.status}`);
}

/** A 2025 client's session on `path`, with helpers to list and call. */
export async function pinClient(path: string, vars: Vars) {
  const { session } = await initialize(path, { vars });
  return {
    session,
    tools: async (): Promise<Json[]> => (await request(path, session, "tools/list", {}, { vars })).result.tools,
    prompts: async (): Promise<Json[]> => (await request(path, session, "prompts/list", {}, { vars })).result.prompts,
    call: (name: string, args: Record<string, unknown>): Promise<Json> =>
      request(path, session, "tools/call", { name, arguments: args }, { vars }),
  };
}

/** A pinned upstream `name` of the test's own, listed once in "base", then switched to `variant` and listed again. */
export async function listedThenChanged(name: string, variant: string, pinning: "warn" | "enforce" = "enforce") {
  const vars = pinVars({ name, pinning });
  const client = await pinClient(`/mcp/${name}`, vars);
  await client.tools();
  await switchVariant(name, variant);
  await client.tools();
  return { vars, client };
}

/** The listed tool named `name`. */
export function tool(tools: readonly Json[], name: string): Json {
  return tools.find((t) => t.name === name);
}

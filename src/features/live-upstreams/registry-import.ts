/**
 * An upstream from the MCP Registry's `server.json` format: its first `remotes` entry of
 * type `streamable-http` becomes the upstream's URL, the `{variable}`s of that URL and of
 * its header values filled from what the admin gives (or their defaults), its headers
 * sent as static headers, and the one header marked `isSecret` stored as the sealed
 * credential. What the server declares and the admin did not give is listed in `needs`,
 * so a caller can ask for it. The result is a body for `PUT /admin/upstreams/<name>`.
 */
import { isObject } from "../../core/jsonrpc";
import type { DocumentProblem } from "../../storage/document-store";

/** One input a server declares: a header, or a variable of its URL or of a header's value. */
export type Need = {
  readonly name: string;
  readonly kind: "header" | "variable";
  readonly description?: string;
  readonly isRequired: boolean;
  readonly isSecret: boolean;
};

export type Imported =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; problems: DocumentProblem[]; needs?: readonly Need[] };

const VARIABLE = /\{([A-Za-z0-9_.-]+)\}/g;

type Input = { description?: unknown; isRequired?: unknown; isSecret?: unknown; default?: unknown; value?: unknown };

function needOf(name: string, kind: Need["kind"], input: Input): Need {
  const need = { name, kind, isRequired: input.isRequired === true, isSecret: input.isSecret === true };
  return typeof input.description === "string" ? { ...need, description: input.description } : need;
}

/** `template` with each `{variable}` filled; the names missing are pushed to `missing`. */
type Named = Record<string, unknown>;

function fill(template: string, variables: Named, values: Named, missing: Set<string>): string {
  return template.replace(VARIABLE, (whole, name: string) => {
    const input = Object.hasOwn(variables, name) ? variables[name] : undefined;
    const declared = isObject(input) ? (input as Input) : undefined;
    const given = Object.hasOwn(values, name) ? values[name] : declared?.default;
    if (typeof given === "string") return given;
    missing.add(name);
    return whole;
  });
}

/**
 * The PUT body for `server` (a `server.json`), with `values` by header or variable name.
 *
 * @example
 * fromServerJson({ remotes: [{ type: "streamable-http", url: "https://x.example/mcp" }] }, {});
 */
export function fromServerJson(server: unknown, values: Named): Imported {
  const remotes = isObject(server) && Array.isArray(server["remotes"]) ? server["remotes"] : undefined;
  if (!remotes) {
    return { ok: false, problems: [{ path: "/server/remotes", message: "must be a server.json's list of remotes" }] };
  }
  const at = remotes.findIndex((remote) => isObject(remote) && remote["type"] === "streamable-http");
  const remote = remotes[at];
  if (!isObject(remote) || typeof remote["url"] !== "string") {
    const message = 'needs a remote of type "streamable-http" with a url (the "sse" transport is not relayed)';
    return { ok: false, problems: [{ path: "/server/remotes", message }] };
  }
  const variables = isObject(remote["variables"]) ? remote["variables"] : {};
  const needs = Object.entries(variables).map(([name, input]) =>
    needOf(name, "variable", isObject(input) ? input : {}),
  );
  const missing = new Set<string>();
  const url = fill(remote["url"], variables, values, missing);
  const headers: Record<string, string> = {};
  let credential: Record<string, unknown> | undefined;
  const problems: DocumentProblem[] = [];
  const declared = Array.isArray(remote["headers"]) ? remote["headers"] : [];
  declared.forEach((header, index) => {
    if (!isObject(header) || typeof header["name"] !== "string") {
      problems.push({ path: `/server/remotes/${at}/headers/${index}`, message: "must be an object with a name" });
      return;
    }
    const name = header["name"];
    needs.push(needOf(name, "header", header));
    const own = isObject(header["variables"]) ? { ...variables, ...header["variables"] } : variables;
    const given = Object.hasOwn(values, name) ? values[name] : (header["value"] ?? header["default"]);
    if (typeof given !== "string") {
      if (header["isRequired"] === true) missing.add(name);
      return;
    }
    const value = fill(given, own, values, missing);
    if (header["isSecret"] !== true) headers[name] = value;
    else if (!credential) credential = { value, header: name, scheme: "" };
    else {
      const message = "a second secret header; the gateway stores one credential per upstream";
      problems.push({ path: `/server/remotes/${at}/headers/${index}`, message });
    }
  });
  const asked = "the server asks for it: give it in values";
  for (const name of missing) problems.push({ path: `/values/${name}`, message: asked });
  if (problems.length > 0) return { ok: false, problems, needs };
  const body: Record<string, unknown> = { url };
  if (Object.keys(headers).length > 0) body["headers"] = headers;
  if (credential) body["credential"] = credential;
  return { ok: true, body };
}

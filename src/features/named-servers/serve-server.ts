/**
 * What a named server serves (the layer of serve.ts, run from the lazily loaded module).
 *
 * Lists keep only the server's picks, an aliased entry renamed (and retitled) as the document
 * says; a call by an alias enters the pipeline as the call of its `<upstream>___<name>`, so
 * visibility, personas, rate limits, pins, rules, guardrails, offload, filters and audit judge
 * it as the original (the record keeps the alias: the audit event carries both names). Any
 * other name is refused as unknown; a resource read outside the picks is not found. The
 * server never widens what the caller may use: its route reaches only its picks' upstreams,
 * and everything inside still applies the caller's persona.
 */
import { isObject, type JsonRpcRequest, type WireMessage } from "../../core/jsonrpc";
import { methodFacts } from "../../core/methods";
import { SYS_PREFIX } from "../../core/names";
import { pathSpan, splice, type Splice } from "../../core/raw-json";
import { keepListed } from "../../core/raw-json-lists";
import type { CallContext, Handler } from "../../context/call-context";
import { listedEntries, setMemberSplice } from "../../pipeline/list-items";
import type { NamedServer, Pick } from "./document";
import { compileServer, type CompiledServer, type NamePicks } from "./picks";
import type { MainParts } from "./main-parts";
import { mcpAliases } from "./mcp-aliases";
import type { OverridesDocument } from "../shaping/overrides-document";
import { appUriTarget } from "../../relay/app-resource-uris";

/** MCP's "resource not found". */
const RESOURCE_NOT_FOUND = -32002;

type Request = WireMessage<JsonRpcRequest>;

/**
 * Whether `server` serves the resource a client of the route knows as `uri`: an MCP App's
 * URI as the route shows it (`ui://<upstream>___<rest>`, relay/app-resource-uris.ts) is
 * judged as its upstream's own URI, which is what a pick names; any other by the upstream
 * this isolate saw serve it.
 */
function servesShown(server: CompiledServer, main: MainParts, uri: string | undefined, name?: string): boolean {
  const app = uri === undefined ? undefined : appUriTarget(uri);
  if (app) return server.servesResource(app.upstream, app.uri, name);
  return server.servesResource(uri && main.uriOwner(uri), uri, name);
}

/** The list `text` with each entry `picks` knows renamed to its alias and retitled. */
function renameListed(ctx: CallContext, method: string, text: string, picks: NamePicks): string {
  const edits: Splice[] = [];
  for (const entry of listedEntries(ctx.route, method, text)) {
    const pick = entry.key === undefined ? undefined : picks.of(entry.key);
    if (!pick) continue;
    if (pick.alias !== undefined) edits.push(setMemberSplice(text, entry.span, "name", JSON.stringify(pick.alias)));
    for (const field of ["title", "description"] as const) {
      const value = pick[field];
      if (value !== undefined) edits.push(setMemberSplice(text, entry.span, field, JSON.stringify(value)));
    }
  }
  return edits.length > 0 ? splice(text, edits) : text;
}

/** The list `text` with only `picks` (and the gateway's own tools), aliased entries renamed and retitled. */
function shapeNames(ctx: CallContext, method: string, key: string, text: string, picks: NamePicks): string {
  const kept = keepListed(text, key, (name) => name !== undefined && (name.startsWith(SYS_PREFIX) || !!picks.of(name)));
  return renameListed(ctx, method, kept, picks);
}

function shapeResources(
  ctx: CallContext,
  method: string,
  key: string,
  text: string,
  server: CompiledServer,
  main: MainParts,
): string {
  const refused = new Set<number>();
  for (const entry of listedEntries(ctx.route, method, text))
    if (!servesShown(server, main, entry.uri, entry.name)) refused.add(entry.span.start);
  return refused.size === 0 ? text : keepListed(text, key, (_name, item) => !refused.has(item.start));
}

/** The request with `params.name` (or `params.ref.name`) replaced, every other byte kept. */
function renamed(request: Request, path: readonly string[], name: string): Request {
  const params = request.message.params ?? {};
  const message: JsonRpcRequest =
    path.length === 2
      ? { ...request.message, params: { ...params, name } }
      : { ...request.message, params: { ...params, ref: { ...(params["ref"] as object), name } } };
  const span = pathSpan(request.text, path);
  return {
    text: span ? splice(request.text, [{ span, raw: JSON.stringify(name) }]) : JSON.stringify(message),
    message,
  };
}

/**
 * The `<upstream>___<name>` a client's `name` stands for: an alias is recorded and replaced.
 * On a named server (`strict`) any name it does not serve is refused; on /mcp it passes as it is.
 */
function original(
  ctx: CallContext,
  picks: NamePicks,
  what: "tool" | "prompt",
  name: unknown,
  refuse?: (label: "tool" | "prompt", name: string, hint: string) => Error,
) {
  if (typeof name !== "string") return undefined; // the pipeline words a malformed request
  if (what === "tool" && name.startsWith(SYS_PREFIX)) return name;
  const aliased: Pick | undefined = picks.byAlias(name);
  if (aliased) {
    ctx.record.alias = name;
    return aliased.pick;
  }
  if (!refuse) return name;
  const pick = picks.of(name);
  if (pick && pick.alias === undefined) return name;
  const server = ctx.route.server;
  const hint = pick ? `; here it is called "${pick.alias}"` : `; ${what}s/list shows the ${what}s it serves`;
  throw refuse(what, name, `not served by "${server}"${hint}`);
}

/** The request, its tool or prompt named by its original name (tools/call, prompts/get, completion of a prompt). */
function byOriginal(
  ctx: CallContext,
  request: Request,
  picks: Record<"tool" | "prompt", NamePicks>,
  main: MainParts | undefined,
) {
  const { method, params, id } = request.message;
  const ref = params?.["ref"];
  // What the request invokes (core/methods.ts), or the prompt a completion refers to.
  const invokes = methodFacts(method).invokes;
  const path =
    method === "completion/complete"
      ? isObject(ref) && ref["type"] === "ref/prompt"
        ? ["params", "ref", "name"]
        : []
      : invokes !== undefined
        ? ["params", "name"]
        : [];
  if (path.length === 0) return request;
  const what = invokes ?? "prompt";
  const given = path.length === 3 ? (ref as Record<string, unknown>)["name"] : params?.["name"];
  const refuse =
    main &&
    ((label: string, name: string, hint: string) =>
      main.unknownName({ reason: "unknown-name", label, name, hints: [hint] }, id));
  const name = original(ctx, picks[what], what, given, refuse);
  return name === undefined || name === given ? request : renamed(request, path, name);
}

function withInstructions(text: string, server: NamedServer): string {
  const result = pathSpan(text, ["result"]);
  if (!result || text.charCodeAt(result.start) !== 0x7b) return text;
  const edits: Splice[] = [];
  if (server.instructions !== undefined)
    edits.push(setMemberSplice(text, result, "instructions", JSON.stringify(server.instructions)));
  const info = server.title === undefined ? undefined : pathSpan(text, ["serverInfo"], result);
  if (info && text.charCodeAt(info.start) === 0x7b)
    edits.push(setMemberSplice(text, info, "title", JSON.stringify(server.title)));
  return edits.length > 0 ? splice(text, edits) : text;
}

/**
 * Serves one request of a named server's route: its lists, its names, its resources.
 *
 * @example
 * return serveServer(ctx, message.wire, server, next, MAIN_PARTS);
 */
export async function serveServer(
  ctx: CallContext,
  request: Request,
  server: NamedServer,
  next: Handler,
  main: MainParts,
) {
  const compiled = compileServer(server);
  const { method, params, id } = request.message;
  const pass = (wire: Request = request) => next(ctx, { kind: "request", wire });
  if (methodFacts(method).invokes !== undefined)
    return pass(byOriginal(ctx, request, { tool: compiled.tools, prompt: compiled.prompts }, main));
  switch (method) {
    case "initialize":
    case "server/discover":
      return (await pass())!.map((text) => withInstructions(text, server));
    case "tools/list":
      return (await pass())!.map((text) => shapeNames(ctx, method, "tools", text, compiled.tools));
    case "prompts/list":
      return (await pass())!.map((text) => shapeNames(ctx, method, "prompts", text, compiled.prompts));
    case "resources/list":
      return (await pass())!.map((text) => shapeResources(ctx, method, "resources", text, compiled, main));
    case "resources/templates/list":
      return (await pass())!.map((text) => shapeResources(ctx, method, "resourceTemplates", text, compiled, main));
    case "completion/complete":
      return pass(byOriginal(ctx, request, { tool: compiled.tools, prompt: compiled.prompts }, main));
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe": {
      const uri = params?.["uri"];
      if (typeof uri === "string" && !servesShown(compiled, main, uri))
        throw main.error(200, RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri }, id);
      return pass();
    }
    default:
      return pass();
  }
}

/** /mcp with the overrides document's aliases: listed under them, called by them or by the original name. */
export async function serveMcpAliases(ctx: CallContext, request: Request, overrides: OverridesDocument, next: Handler) {
  const { method } = request.message;
  const pass = (wire: Request = request) => next(ctx, { kind: "request", wire });
  const aliases = mcpAliases(overrides);
  if (method === "tools/list") return (await pass())!.map((text) => renameListed(ctx, method, text, aliases.tools));
  if (method === "prompts/list") return (await pass())!.map((text) => renameListed(ctx, method, text, aliases.prompts));
  return pass(byOriginal(ctx, request, { tool: aliases.tools, prompt: aliases.prompts }, undefined));
}

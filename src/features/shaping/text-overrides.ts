/**
 * Text overrides: retitles and re-describes tools and prompts, and replaces an upstream's
 * `instructions`, from the overrides document in KV (features/shaping/overrides-document.ts), without
 * touching the upstream. Only the overridden members are spliced; every other byte of a
 * list (schemas above all) stays as the upstream sent it.
 *
 * On /mcp the instructions are the gateway's own, one part per upstream under its
 * heading (relay/initialize.ts): an override replaces that upstream's part, or adds it.
 */
import { OVERRIDES_KEY } from "../../storage/document-keys";
import { pathSpan, parseSpan, splice, type Splice } from "../../core/raw-json";
import { onRequests, type CallContext, type Middleware } from "../../context/call-context";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { loadDocument } from "../../storage/document-store";
import { checkOverrides, type OverridesDocument, type TextOverride } from "./overrides-document";
import { INSTRUCTIONS_SEPARATOR, instructionsHeading, joinInstructions } from "../../relay/initialize";
import { listedEntries, setMemberSplice } from "../../pipeline/list-items";

export type TextOverrideOptions = { readonly cacheTtlMs?: number };

async function overridesOf(ctx: CallContext, ttlMs: number): Promise<OverridesDocument | undefined> {
  const kv = ctx.services.kv;
  if (!kv) return undefined;
  const stored = await loadDocument(kv, OVERRIDES_KEY, ttlMs, checkOverrides);
  return stored.state === "valid" ? stored.value : undefined; // a broken document is logged by the store and not applied
}

function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

function overrideList(ctx: CallContext, method: string, text: string, document: OverridesDocument): string {
  const edits: Splice[] = [];
  for (const entry of listedEntries(ctx.route, method, text)) {
    const table = entry.kind === "tool" ? document.tools : entry.kind === "prompt" ? document.prompts : undefined;
    const override: TextOverride | undefined = table && entry.key !== undefined ? own(table, entry.key) : undefined;
    if (!override) continue;
    for (const field of ["title", "description"] as const) {
      const value = override[field];
      if (value !== undefined) edits.push(setMemberSplice(text, entry.span, field, JSON.stringify(value)));
    }
  }
  return edits.length > 0 ? splice(text, edits) : text;
}

/** The parts of the instructions on /mcp, by upstream, in the route's order. */
function instructionParts(ctx: CallContext, text: string): Map<string, string> {
  const found = ctx.route.upstreams
    .map((upstream) => ({ name: upstream.name, at: text.indexOf(instructionsHeading(upstream.name)) }))
    .filter((part) => part.at >= 0)
    .sort((a, b) => a.at - b.at);
  const parts = new Map<string, string>();
  found.forEach((part, index) => {
    const next = found[index + 1];
    const end = next ? next.at - INSTRUCTIONS_SEPARATOR.length : text.length;
    parts.set(part.name, text.slice(part.at + instructionsHeading(part.name).length, Math.max(end, part.at)));
  });
  return parts;
}

function overrideInstructions(ctx: CallContext, text: string, document: OverridesDocument): string {
  const result = pathSpan(text, ["result"]);
  if (!result || text.charCodeAt(result.start) !== 0x7b) return text;
  const current = pathSpan(text, ["instructions"], result);
  const value = current ? parseSpan(text, current) : undefined;
  const existing = typeof value === "string" ? value : "";
  let instructions: string | undefined;
  if (ctx.route.kind === "upstream") {
    instructions = own(document.upstreams, ctx.route.upstream.name)?.instructions;
  } else {
    const parts = instructionParts(ctx, existing);
    let changed = false;
    for (const upstream of ctx.route.upstreams) {
      const override = own(document.upstreams, upstream.name)?.instructions;
      if (override === undefined) continue;
      parts.set(upstream.name, override);
      changed = true;
    }
    if (changed)
      instructions = joinInstructions(
        ctx.route.upstreams.filter((u) => parts.has(u.name)).map((u) => [u.name, parts.get(u.name)!] as const),
      );
  }
  if (instructions === undefined) return text;
  return splice(text, [setMemberSplice(text, result, "instructions", JSON.stringify(instructions))]);
}

/** The methods whose answers text overrides change (src/chain.ts declares them for the middleware). */
export const OVERRIDDEN_METHODS: readonly string[] = ["tools/list", "prompts/list", "initialize", "server/discover"];

/**
 * The text-override middleware: the answers of {@link OVERRIDDEN_METHODS}.
 *
 * @example
 * const handler = composeMiddleware([textOverrides({ cacheTtlMs: 30_000 })], relay);
 */
export function textOverrides({ cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: TextOverrideOptions = {}): Middleware {
  return onRequests(
    (next) =>
      async function textOverrides(ctx, request) {
        const { method } = request.message;
        const answer = await next(ctx, request);
        const document = await overridesOf(ctx, cacheTtlMs);
        if (!document) return answer;
        return answer.map((text) =>
          method === "initialize" || method === "server/discover"
            ? overrideInstructions(ctx, text, document)
            : overrideList(ctx, method, text, document),
        );
      },
  );
}

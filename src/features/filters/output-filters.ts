/**
 * Output filters: applies the filter set chosen by the plan to tools/call results, and
 * keeps tools/list honest about it (a filtered tool's `outputSchema` no longer describes
 * what the client receives, so it is removed, and the tool's `_meta` says why).
 *
 * A client that listed tools under other filters than a call's may hold the tool's
 * upstream `outputSchema`; such a call of a filtered tool is answered with a tool error
 * saying to list tools again (features/filters/listed-shapes.ts), never with a result that
 * contradicts the schema.
 *
 * Fails closed: a set that is broken, or a rule that fails on a result, turns the call
 * into a tool error naming the set and rule; the unfiltered data never goes out. In
 * shadow mode nothing changes; what the set would save is logged.
 *
 * A client listening (a 2025 GET stream, or a 2026-07-28 `subscriptions/listen` that
 * asked for `toolsListChanged`) is told when a filter edit changes what `tools/list` shows.
 */
import { resultText, type JsonRpcId } from "../../core/jsonrpc";
import { Answer } from "../../context/answer";
import {
  appendMemberSplice,
  elements,
  member,
  members,
  parseSpan,
  pathSpan,
  removeMemberSplice,
  splice,
  type Splice,
} from "../../core/raw-json";
import { BYTES_PER_TOKEN, FilterError, selectFilter } from "./apply-filter";
import { filterAnswer, type AnswerFilterOutcome } from "./filter-answer";
import { matchesGlob } from "../../core/glob";
import { activeFilters, type ActiveFilters } from "./filter-store";
import { currentShapes, mayHoldUpstreamSchema, recordListing } from "./listed-shapes";
import {
  onRequests,
  readingAnswer,
  toolKey,
  withLargeAnswers,
  type CallContext,
  type LargeAnswerTaker,
  type Middleware,
} from "../../context/call-context";
import { SYS_PREFIX } from "../../core/names";
import { utf8Length } from "../../core/utf8-position";
import { announceFilterEditsDuringListen, TOOLS_LIST_CHANGED, watchFilterShapes } from "./filter-watch";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { namedAt } from "../../context/call-target";

export const FILTERED_META_KEY = "mcp-edge-gateway/output-filter";
/** Answers larger than this are not filtered in memory: the call fails closed. */
export const MAX_FILTERED_ANSWER_BYTES = 16 * 1024 * 1024;

export type OutputFilterOptions = { readonly cacheTtlMs?: number };

function toolError(id: JsonRpcId, message: string): string {
  return resultText(id, { content: [{ type: "text", text: message }], isError: true });
}

function affects(active: ActiveFilters, key: string): boolean {
  if (active.state !== "broken") return false;
  return !active.toolKeys || active.toolKeys.some((glob) => matchesGlob(glob, key));
}

/** True when `active` filters `key` and so removes its `outputSchema` from tools/list. */
function reshapes(active: ActiveFilters, key: string): active is Extract<ActiveFilters, { state: "active" }> {
  return active.state === "active" && active.set.mode === "enforce" && selectFilter(active.set, key) !== undefined;
}

function staleListMessage(name: string): string {
  return (
    `The gateway's output filter for ${name} changed since this session listed tools, so the result would not match the ` +
    `outputSchema you may hold for it. The tool was not called. List tools again (tools/list) and retry the call.`
  );
}

async function filterCall(
  ctx: CallContext,
  id: JsonRpcId,
  key: string,
  active: ActiveFilters,
  answer: (ctx: CallContext) => Promise<Answer>,
): Promise<Answer> {
  if (active.state === "broken") {
    return Answer.ofText(toolError(id, `The gateway withheld this call: ${active.message}.`));
  }
  if (active.state !== "active") return answer(ctx);
  const { set } = active;
  const selected = selectFilter(set, key);
  if (!selected) return answer(ctx);
  let withheld = false;
  const enforced: LargeAnswerTaker = {
    minBytes: MAX_FILTERED_ANSWER_BYTES,
    // An answer too large to filter in memory is withheld, never passed on unfiltered.
    take: async (body, answering) => {
      await body.cancel();
      withheld = true;
      return toolError(
        answering,
        `The gateway withheld this result: it is larger than ${MAX_FILTERED_ANSWER_BYTES} bytes, too large for filter set "${set.name}" to filter.`,
      );
    },
  };
  // In shadow mode offload may take the answer while it streams; there is then nothing to measure.
  let offloaded = false;
  const outer = ctx.largeAnswers?.offload;
  const observed: LargeAnswerTaker | undefined = outer && {
    minBytes: outer.minBytes,
    take: (body, answering) => {
      offloaded = true;
      return outer.take(body, answering);
    },
  };
  // The answer is read below: it is held whole, never passed on as it flows.
  const shadowed = observed ? withLargeAnswers(ctx, { offload: observed }) : readingAnswer(ctx);
  const answered = await answer(set.mode === "enforce" ? withLargeAnswers(ctx, { filter: enforced }) : shadowed);
  if (withheld) return answered; // the withheld answer, as the relay gave it the client's id
  if (set.mode === "shadow" && offloaded) return answered;
  const text = answered.text;
  const label = `filter set "${set.name}", rule "${selected.key}"`;
  let filtered: AnswerFilterOutcome;
  try {
    filtered = filterAnswer(text, id, selected.filter, label);
  } catch (error) {
    if (!(error instanceof FilterError)) throw error;
    if (set.mode === "shadow") {
      console.log(
        JSON.stringify({
          event: "output-filter-shadow",
          set: set.name,
          tool: key,
          rule: selected.key,
          wouldFail: error.message,
        }),
      );
      return answered;
    }
    console.warn(`mcp-edge-gateway: ${error.message}`);
    return answered.withText(toolError(id, `The gateway withheld this result: ${error.message}.`));
  }
  if (filtered.state === "unchanged") return answered;
  const out = filtered.text;
  const [before, after] = [utf8Length(text), utf8Length(out)];
  const saved = before - after;
  Object.assign(ctx.record, {
    filterSet: set.name,
    filterRule: selected.key,
    bytesSaved: saved,
    filterShadow: set.mode === "shadow",
  });
  if (set.mode === "shadow") {
    console.log(
      JSON.stringify({
        event: "output-filter-shadow",
        set: set.name,
        tool: key,
        rule: selected.key,
        bytesBefore: before,
        bytesAfter: after,
        bytesSaved: saved,
        tokensSavedEstimate: Math.round(saved / BYTES_PER_TOKEN),
      }),
    );
    return answered;
  }
  return answered.withText(out);
}

/**
 * Removes `outputSchema` from listed tools whose results an enforced set changes, saying
 * why in `_meta`. On /mcp each tool is judged by the set of its own upstream.
 */
async function rewriteList(
  ctx: CallContext,
  text: string,
  setFor: (upstream: string) => Promise<ActiveFilters>,
): Promise<string> {
  const tools = pathSpan(text, ["result", "tools"]);
  if (!tools || text.charCodeAt(tools.start) !== 0x5b) return text;
  const edits: Splice[] = [];
  for (const tool of elements(text, tools)) {
    if (text.charCodeAt(tool.start) !== 0x7b || !member(text, tool, "outputSchema")) continue;
    const nameSpan = member(text, tool, "name");
    const name = nameSpan ? parseSpan(text, nameSpan) : undefined;
    const key = typeof name === "string" ? toolKey(ctx.route, name) : undefined;
    if (!key || key.key.startsWith(SYS_PREFIX)) continue;
    const active = await setFor(key.upstream);
    if (!reshapes(active, key.key)) continue;
    const note = {
      set: active.set.name,
      outputSchema:
        "removed: this tool's results are filtered by the gateway, so the upstream's schema no longer describes them",
    };
    const meta = members(text, tool).find((m) => m.key === "_meta");
    edits.push(removeMemberSplice(text, tool, "outputSchema")!);
    if (!meta) edits.push(appendMemberSplice(text, tool, "_meta", JSON.stringify({ [FILTERED_META_KEY]: note })));
    else if (text.charCodeAt(meta.value.start) === 0x7b)
      edits.push(appendMemberSplice(text, meta.value, FILTERED_META_KEY, JSON.stringify(note)));
  }
  return edits.length > 0 ? splice(text, edits) : text;
}

/**
 * The output-filter middleware.
 *
 * @example
 * const handler = composeMiddleware([outputFilters({ cacheTtlMs: 30_000 })], relay);
 */
export function outputFilters({ cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: OutputFilterOptions = {}): Middleware {
  const requests = onRequests(
    (next) =>
      async function outputFilters(ctx, request) {
        const { method, id, params } = request.message;
        const kv = ctx.services.kv;
        const ttl = cacheTtlMs;
        const route = ctx.route.kind === "upstream" ? ctx.route.upstream.name : "";
        if (method === "tools/list") {
          const answer = await next(ctx, request);
          const text = answer.text;
          const sets = new Map<string, Promise<ActiveFilters>>();
          const setFor = (upstream: string) => {
            let active = sets.get(upstream);
            if (!active) {
              active = activeFilters(kv, route, upstream, ttl);
              sets.set(upstream, active);
            }
            return active;
          };
          const listed = await rewriteList(ctx, text, setFor);
          if (pathSpan(listed, ["result", "tools"])) {
            // What the client now holds is what the call path compares with (see listed-shapes.ts).
            const names = ctx.route.upstreams.map((upstream) => upstream.name);
            const session = ctx.identity.session;
            if (session)
              await recordListing(
                kv,
                session,
                names,
                await currentShapes(names, setFor),
                params?.["cursor"] !== undefined,
              );
          }
          return answer.withText(listed);
        }
        const key = namedAt(ctx.target);
        if (!key || key.key.startsWith(SYS_PREFIX)) return next(ctx, request);
        const active = await activeFilters(kv, route, key.upstream, ttl);
        if (active.state === "broken" && !affects(active, key.key)) return next(ctx, request);
        // Clients without a session (none yet) would need another way to say what they hold.
        const session = ctx.identity.session;
        if (session && reshapes(active, key.key) && (await mayHoldUpstreamSchema(kv, session, key.upstream, active))) {
          // Checked before forwarding: a retry after listing again must not run the tool twice.
          return Answer.ofText(toolError(id, staleListMessage(String(params?.["name"]))));
        }
        return filterCall(ctx, id, key.key, active, (inner) => next(inner, request));
      },
  );
  return (next) => {
    const handleRequests = requests(next);
    return async function outputFilters(ctx, message) {
      if (message.kind === "request" && message.wire.message.method === "subscriptions/listen") {
        if (ctx.identity.session) return next(ctx, message);
        return announceFilterEditsDuringListen(ctx, message.wire.message.id, cacheTtlMs, (inner) =>
          next(inner, message),
        );
      }
      if (message.kind !== "listen" || !ctx.identity.session) return handleRequests(ctx, message);
      // While the client's stream is open, a filter edit that changes what tools/list shows is announced on it.
      const stop = watchFilterShapes({
        kv: ctx.services.kv,
        cacheTtlMs,
        session: ctx.identity.session,
        route: ctx.route.name,
        upstreams: ctx.route.upstreams.map((upstream) => upstream.name),
        notify: () => void ctx.emit(TOOLS_LIST_CHANGED),
      });
      try {
        return await next(ctx, message);
      } finally {
        stop();
      }
    };
  };
}

/**
 * Tool visibility: trims `tools/list` by the allow/deny patterns of the "visibility"
 * KV document (visibility-document.ts, the reference semantics), on both routes, keeping
 * each listed tool's bytes. Every other message passes through: it is not a security
 * boundary (authorization gates calls). A broken document is logged by the store and
 * trims nothing.
 */
import { VISIBILITY_KEY } from "../../storage/document-keys";
import { keepListed } from "../../core/raw-json-lists";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { onRequests, toolKey, type Middleware } from "../../context/call-context";
import { checkVisibility, isVisible } from "./visibility-document";
import { loadDocument } from "../../storage/document-store";

export type VisibilityOptions = { readonly cacheTtlMs?: number };

/**
 * The visibility middleware.
 *
 * @example
 * composeMiddleware([visibility({ cacheTtlMs: 30_000 }), sysTools()], relay);
 */
export function visibility({ cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: VisibilityOptions = {}): Middleware {
  return onRequests(
    (next) =>
      async function visibility(ctx, request) {
        const kv = ctx.services.kv;
        if (!kv) return next(ctx, request);
        const [stored, answer] = await Promise.all([
          loadDocument(kv, VISIBILITY_KEY, cacheTtlMs, checkVisibility),
          next(ctx, request),
        ]);
        if (stored.state !== "valid" || (stored.value.allow.length === 0 && stored.value.deny.length === 0))
          return answer;
        return answer.map((text) =>
          keepListed(text, "tools", (name) => {
            const key = name === undefined ? undefined : toolKey(ctx.route, name);
            return key === undefined || isVisible(stored.value, key.key);
          }),
        );
      },
  );
}

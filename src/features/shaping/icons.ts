/**
 * Icons: adds the icons of the icons document (features/shaping/icons-document.ts) to the matching entries
 * of tools/list, prompts/list, resources/list and resources/templates/list, after the
 * upstream's own icons or in their place. Icon files the gateway serves become URLs on
 * the origin the client reached it by. Only the `icons` member of a matched entry
 * changes; every other byte of the list stays as the upstream sent it.
 */
import { ICONS_KEY } from "../../storage/document-keys";
import { elements, member, splice, type Splice } from "../../core/raw-json";
import { onRequests, type CallContext, type Middleware } from "../../context/call-context";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { loadDocument } from "../../storage/document-store";
import { matchesGlob } from "../../core/glob";
import { checkIcons, type IconSpec, type IconsDocument } from "./icons-document";
import { listedEntries, setMemberSplice, type ListedEntry } from "../../pipeline/list-items";

export type IconOptions = { readonly cacheTtlMs?: number };

/** The icon as listed: a gateway-served file becomes an absolute URL under /icons/. */
function listedIcon(origin: string, icon: IconSpec): Record<string, unknown> {
  const { file, ...rest } = icon;
  return file === undefined ? { ...rest } : { src: `${origin}/icons/${encodeURIComponent(file)}`, ...rest };
}

function iconsFor(document: IconsDocument, entry: ListedEntry): IconSpec[] {
  const out: IconSpec[] = [];
  for (const rule of document.entries) {
    if (!rule.kinds.includes(entry.kind)) continue;
    const matched = [entry.key, entry.uri].some((value) => value !== undefined && matchesGlob(rule.match, value));
    if (matched) out.push(...rule.icons);
  }
  return out;
}

function addIcons(ctx: CallContext, method: string, text: string, document: IconsDocument): string {
  const edits: Splice[] = [];
  for (const entry of listedEntries(ctx.route, method, text)) {
    const icons = iconsFor(document, entry);
    if (icons.length === 0) continue;
    const raw = icons.map((icon) => JSON.stringify(listedIcon(ctx.route.origin, icon))).join(",");
    const own = member(text, entry.span, "icons");
    if (own && document.mode === "extend" && text.charCodeAt(own.start) === 0x5b) {
      // After the upstream's own icons, inside their array.
      const close = own.end - 1;
      edits.push({ span: { start: close, end: close }, raw: `${elements(text, own).length > 0 ? "," : ""}${raw}` });
    } else edits.push(setMemberSplice(text, entry.span, "icons", `[${raw}]`));
  }
  return edits.length > 0 ? splice(text, edits) : text;
}

/**
 * The icons middleware.
 *
 * @example
 * const handler = composeMiddleware([icons({ cacheTtlMs: 30_000 })], relay);
 */
export function icons({ cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: IconOptions = {}): Middleware {
  return onRequests(
    (next) =>
      async function icons(ctx, request) {
        const { method } = request.message;
        const answer = await next(ctx, request);
        const kv = ctx.services.kv;
        const stored = kv ? await loadDocument(kv, ICONS_KEY, cacheTtlMs, checkIcons) : undefined;
        return stored?.state === "valid" ? answer.map((text) => addIcons(ctx, method, text, stored.value)) : answer;
      },
  );
}

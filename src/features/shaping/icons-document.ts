/**
 * The icons document (KV key `shaping/icons`): which icons the gateway puts on tools,
 * prompts, resources and resource templates in their lists. An entry matches by
 * `<upstream>___<name>` for tools and prompts, by URI (templates: URI template) or name
 * for resources, globs allowed (core/glob.ts). An icon names a `src` URL, or a `file`
 * the gateway serves itself (`PUT /admin/icons/files/<name>`, served at `/icons/<name>`).
 * `mode` says whether matched icons replace the upstream's own or are added after them.
 *
 * ```yaml
 * mode: extend            # or replace
 * icons:
 *   - match: "alpha___*"
 *     kinds: [tool, prompt]
 *     icons: [{ file: alpha.png, mimeType: image/png, sizes: ["48x48"] }]
 *   - match: "alpha://*"
 *     icons: [{ src: "https://example.com/doc.svg", mimeType: image/svg+xml, theme: light }]
 * ```
 */
import { isObject } from "../../core/jsonrpc";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import { ICON_FILE_NAME } from "./icon-files";
import { deepFreeze } from "../../storage/document-limits";
import { at, checkText, rootProblem, unknownFields } from "../../storage/document-checks";

const KINDS = ["tool", "prompt", "resource", "resourceTemplate"] as const;
const MAX_ICON_ENTRIES = 1_000;
const MAX_ICONS_PER_ENTRY = 8;
const MAX_URL_CHARS = 2_048;

export type IconKind = (typeof KINDS)[number];

/** An icon as the gateway lists it; `file` becomes a `src` on the gateway's origin. */
export type IconSpec = {
  readonly src?: string;
  readonly file?: string;
  readonly mimeType?: string;
  readonly sizes?: readonly string[];
  readonly theme?: "light" | "dark";
};

export type IconEntry = {
  readonly match: string;
  readonly kinds: readonly IconKind[];
  readonly icons: readonly IconSpec[];
};

export type IconsDocument = { readonly mode: "extend" | "replace"; readonly entries: readonly IconEntry[] };

function checkIcon(value: unknown, path: string, problems: DocumentProblem[]): void {
  if (!isObject(value))
    return void problems.push({ path, message: "must be an object {src | file, mimeType?, sizes?, theme?}" });
  unknownFields(value, ["src", "file", "mimeType", "sizes", "theme"], path, problems);
  const { src, file, mimeType, sizes, theme } = value;
  if ((src === undefined) === (file === undefined))
    problems.push({ path, message: "needs exactly one of src (a URL) and file (an icon file the gateway serves)" });
  if (
    src !== undefined &&
    checkText(src, at(path, "src"), problems, MAX_URL_CHARS) &&
    !/^(https:|data:image\/)/i.test(src)
  ) {
    problems.push({ path: at(path, "src"), message: "must be an https: or data:image/ URL" });
  }
  if (file !== undefined && (typeof file !== "string" || !ICON_FILE_NAME.test(file)))
    problems.push({ path: at(path, "file"), message: "must be an icon file name: letters, digits, '.', '-' or '_'" });
  if (mimeType !== undefined && (typeof mimeType !== "string" || !/^image\/[A-Za-z0-9.+-]+$/.test(mimeType)))
    problems.push({ path: at(path, "mimeType"), message: "must be an image type such as image/png" });
  if (
    sizes !== undefined &&
    (!Array.isArray(sizes) || sizes.some((size) => typeof size !== "string" || !/^(any|\d+x\d+)$/.test(size)))
  ) {
    problems.push({ path: at(path, "sizes"), message: 'must be a list such as ["48x48", "any"]' });
  }
  if (theme !== undefined && theme !== "light" && theme !== "dark")
    problems.push({ path: at(path, "theme"), message: 'must be "light" or "dark"' });
}

/**
 * Validates an icons document.
 *
 * @example
 * checkIcons({ icons: [{ match: "alpha___*", icons: [{ file: "alpha.png" }] }] }); // { ok: true, ... }
 */
export function checkIcons(value: unknown): Checked<IconsDocument> {
  const root = rootProblem(value, "{mode?, icons}");
  if (root || !isObject(value)) return { ok: false, problems: [root!] };
  const problems: DocumentProblem[] = [];
  unknownFields(value, ["mode", "icons"], "", problems);
  const mode = value["mode"] ?? "extend";
  if (mode !== "extend" && mode !== "replace")
    problems.push({ path: "/mode", message: 'must be "extend" (add to the upstream\'s icons) or "replace"' });
  const list = value["icons"];
  if (!Array.isArray(list) || list.length > MAX_ICON_ENTRIES)
    return {
      ok: false,
      problems: [
        ...problems,
        { path: "/icons", message: `must be a list of at most ${MAX_ICON_ENTRIES} {match, kinds?, icons}` },
      ],
    };
  const entries: IconEntry[] = [];
  list.forEach((entry: unknown, index) => {
    const path = at("/icons", index);
    if (!isObject(entry)) return void problems.push({ path, message: "must be an object {match, kinds?, icons}" });
    unknownFields(entry, ["match", "kinds", "icons"], path, problems);
    checkText(entry["match"], at(path, "match"), problems, MAX_URL_CHARS);
    const kinds = entry["kinds"] ?? KINDS;
    if (!Array.isArray(kinds) || kinds.some((kind) => !KINDS.includes(kind as IconKind)))
      problems.push({ path: at(path, "kinds"), message: `must be a list of ${KINDS.join(", ")}` });
    const icons = entry["icons"];
    if (!Array.isArray(icons) || icons.length === 0 || icons.length > MAX_ICONS_PER_ENTRY)
      problems.push({ path: at(path, "icons"), message: `must be a list of 1 to ${MAX_ICONS_PER_ENTRY} icons` });
    else icons.forEach((icon, i) => checkIcon(icon, at(at(path, "icons"), i), problems));
    entries.push({ match: entry["match"] as string, kinds: kinds as IconKind[], icons: icons as IconSpec[] });
  });
  return problems.length > 0
    ? { ok: false, problems }
    : { ok: true, value: deepFreeze(structuredClone({ mode: mode as "extend" | "replace", entries })) };
}

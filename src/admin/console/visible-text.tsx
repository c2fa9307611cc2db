/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Text an upstream wrote, shown so an operator sees all of it. hono/jsx already escapes
 * markup; this also makes the characters a page would not show visible: those of the one
 * list of invisible characters (core/invisible-characters.ts, which the findings scan
 * reads too): Unicode tag characters (a hidden instruction a model reads), zero-width and
 * bidi controls, other format and control characters, variation selectors, private use
 * and blank fillers. Each run of them becomes a marked span of its code points
 * (`U+E0073 U+E0065 …`), and a run of tag characters also shows the text it spells.
 * Linear in the text; bounded per run.
 */
import { codePointLabels, invisibleRuns } from "../../core/invisible-characters";
import { Fragment, h } from "./jsx";

/** Code points listed per run; the rest are counted. */
const MAX_CODE_POINTS_SHOWN = 8;
/** Characters of the text a run of tag characters spells, shown per run. */
const MAX_TAG_TEXT_CHARS = 200;
const TAG_FIRST = 0xe0020;
const TAG_LAST = 0xe007e;

/** One piece of a text: as it is, or a run of invisible characters described. */
export type TextPart =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "invisible"; readonly shown: string };

/** How a run of invisible characters is shown: its code points, and what tag characters in it spell. */
function describeRun(run: string): string {
  let spelled = "";
  for (const char of run) {
    const code = char.codePointAt(0)!;
    if (code >= TAG_FIRST && code <= TAG_LAST) spelled += String.fromCharCode(code - 0xe0000);
    if (spelled.length >= MAX_TAG_TEXT_CHARS) break;
  }
  return `${codePointLabels(run, MAX_CODE_POINTS_SHOWN)}${spelled === "" ? "" : ` hidden text: "${spelled}"`}`;
}

/**
 * Splits `text` into what reads as it is and runs of invisible characters.
 *
 * @example
 * visibleParts("Echoes\u200Bits text");
 * // [{ kind: "text", text: "Echoes" }, { kind: "invisible", shown: "U+200B" }, { kind: "text", text: "its text" }]
 */
export function visibleParts(text: string): TextPart[] {
  const parts: TextPart[] = [];
  let from = 0;
  for (const match of text.matchAll(invisibleRuns())) {
    if (match.index > from) parts.push({ kind: "text", text: text.slice(from, match.index) });
    parts.push({ kind: "invisible", shown: describeRun(match[0]) });
    from = match.index + match[0].length;
  }
  if (from < text.length) parts.push({ kind: "text", text: text.slice(from) });
  return parts;
}

/** Upstream-provided text as text, its invisible characters shown as code points. */
export function Visible({ text }: { text: string }) {
  return (
    <>
      {visibleParts(text).map((part) =>
        part.kind === "text" ? (
          part.text
        ) : (
          <mark class="invisible" title="characters a reader does not see">
            {`[${part.shown}]`}
          </mark>
        ),
      )}
    </>
  );
}

/** A JSON value from an upstream as visible text: a string as it is, anything else as indented JSON. */
export function VisibleValue({ value }: { value: unknown }) {
  return <Visible text={typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? String(value))} />;
}

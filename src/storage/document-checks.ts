/**
 * Small checks shared by the live-edited shaping documents (icons, overrides, rules):
 * known fields, strings of bounded length, depth. Each problem is located by a JSON
 * Pointer, as the admin API reports them.
 */
import { escapeToken } from "../core/json-pointer";
import { isObject } from "../core/jsonrpc";
import type { DocumentProblem } from "../storage/document-store";
import { MAX_DOCUMENT_DEPTH, tooDeepAt } from "./document-limits";

/** The longest text a document may put in front of a client (a description, a hint). */
export const MAX_TEXT_CHARS = 16 * 1024;

/** A pointer one step below `path`. */
export function at(path: string, token: string | number): string {
  return `${path}/${escapeToken(String(token))}`;
}

/** Reports members of `value` not in `known`. */
export function unknownFields(
  value: Record<string, unknown>,
  known: readonly string[],
  path: string,
  problems: DocumentProblem[],
): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key))
      problems.push({ path: at(path, key), message: `unknown field (known: ${known.join(", ")})` });
  }
}

/** True when `value` is a string of 1 to `max` characters; reports it otherwise. */
export function checkText(
  value: unknown,
  path: string,
  problems: DocumentProblem[],
  max = MAX_TEXT_CHARS,
): value is string {
  if (typeof value === "string" && value.length > 0 && value.length <= max) return true;
  problems.push({ path, message: `must be a non-empty string of at most ${max} characters` });
  return false;
}

/** The root problem of a document that is not an object, or nested too deep; undefined when neither. */
export function rootProblem(value: unknown, shape: string): DocumentProblem | undefined {
  if (!isObject(value)) return { path: "", message: `must be an object ${shape}` };
  const deep = tooDeepAt(value);
  return deep === undefined
    ? undefined
    : { path: deep, message: `nested deeper than ${MAX_DOCUMENT_DEPTH} levels of objects and arrays` };
}

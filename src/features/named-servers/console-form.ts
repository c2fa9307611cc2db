/**
 * The Servers page's plain logic (loaded on demand, with the rest of named servers): which
 * catalog tools a server's document picks (exact picks, with alias and title, or globs), the
 * document a submitted form makes, and the estimated tokens of the tools/list it would serve.
 * The form edits title, instructions, catalog mode, roles and the exact picks of listed
 * tools; everything else in the document (globs, picks of tools not listed now, prompts,
 * resources, descriptions) travels in a hidden field and is stored back as it was.
 */
import { isObject, type JsonObject } from "../../core/jsonrpc";
import { isGlob, matchesGlob } from "../../core/glob";
import type { CatalogEntry } from "../catalog/console-catalog";
import { MAX_PICKS_PER_KIND } from "./document";

/** Tool rows a submitted form is read for, at most (a server picks at most MAX_PICKS_PER_KIND tools). */
export const MAX_FORM_ROWS = 4 * MAX_PICKS_PER_KIND;

/** One catalog tool as the form shows it: picked or not, its alias and title. */
export type ToolRow = { readonly entry: CatalogEntry; picked: boolean; alias: string; title: string };

/** What the form does not edit, kept as the document had it. */
export type Kept = {
  readonly tools: unknown[];
  readonly prompts: unknown[];
  readonly resources: unknown[];
  readonly descriptions: Record<string, string>;
};

/** The document as the page edits it (as stored, or as submitted). */
export type Draft = { readonly document: JsonObject; readonly rows: ToolRow[]; readonly kept: Kept };

const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** A tool pick's `pick`, alias, title and description, whether written as a string or an object. */
function pickOf(entry: unknown): { pick: string; alias: string; title: string; description?: string } {
  if (typeof entry === "string") return { pick: entry, alias: "", title: "" };
  const value = isObject(entry) ? entry : {};
  const description = value["description"];
  return {
    pick: text(value["pick"]),
    alias: text(value["alias"]),
    title: text(value["title"]),
    ...(typeof description === "string" ? { description } : {}),
  };
}

/** The rows of `tools` (the catalog's) for `document`, and what the form keeps aside. */
export function draftOf(document: JsonObject, tools: readonly CatalogEntry[]): Draft {
  const listed = new Map(tools.map((entry) => [entry.key, entry]));
  const picked = new Map<string, { alias: string; title: string }>();
  const kept: Kept = {
    tools: [],
    prompts: listOf(document["prompts"]),
    resources: listOf(document["resources"]),
    descriptions: {},
  };
  for (const entry of listOf(document["tools"])) {
    const pick = pickOf(entry);
    if (!listed.has(pick.pick) || picked.has(pick.pick)) {
      kept.tools.push(entry);
      continue;
    }
    picked.set(pick.pick, { alias: pick.alias, title: pick.title });
    if (pick.description !== undefined) kept.descriptions[pick.pick] = pick.description;
  }
  const rows = tools.map((entry) => {
    const pick = picked.get(entry.key);
    return { entry, picked: pick !== undefined, alias: pick?.alias ?? "", title: pick?.title ?? "" };
  });
  return { document, rows, kept };
}

/** The hidden field's text back as `Kept`, or why it cannot be. */
export function keptOf(field: string): Kept | string {
  try {
    const value: unknown = JSON.parse(field === "" ? "{}" : field);
    if (!isObject(value)) return "the form's kept picks are not a JSON object";
    const descriptions = isObject(value["descriptions"]) ? value["descriptions"] : {};
    return {
      tools: listOf(value["tools"]),
      prompts: listOf(value["prompts"]),
      resources: listOf(value["resources"]),
      descriptions: Object.fromEntries(Object.entries(descriptions).filter(([, d]) => typeof d === "string")) as Record<
        string,
        string
      >,
    };
  } catch {
    return "the form's kept picks are not JSON; reload the page";
  }
}

/** A submitted form field by name ("" when absent). */
type Field = (name: string) => string;

/** The document a submitted form makes: its fields, the picked rows, and what it kept. */
export function documentOf(get: Field, kept: Kept): JsonObject {
  const tools: unknown[] = [];
  const rows = Math.min(Number.parseInt(get("rows"), 10) || 0, MAX_FORM_ROWS);
  for (let i = 0; i < rows; i++) {
    const key = get(`k${i}`);
    if (key === "" || get(`p${i}`) !== "on") continue;
    const alias = get(`a${i}`).trim();
    const title = get(`t${i}`).trim();
    const description = kept.descriptions[key];
    const renamed = alias !== "" || title !== "" || description !== undefined;
    tools.push(
      renamed
        ? {
            pick: key,
            ...(alias ? { alias } : {}),
            ...(title ? { title } : {}),
            ...(description !== undefined ? { description } : {}),
          }
        : key,
    );
  }
  const roles = get("roles")
    .split(",")
    .map((role) => role.trim())
    .filter(Boolean);
  const optional = (name: string, value: string) => (value.trim() === "" ? {} : { [name]: value.trim() });
  return {
    ...optional("title", get("title")),
    ...optional("instructions", get("instructions")),
    ...optional("catalog", get("catalog")),
    ...(roles.length > 0 ? { roles } : {}),
    tools: [...tools, ...kept.tools],
    prompts: kept.prompts,
    resources: kept.resources,
  };
}

/** Bytes and estimated tokens of a tools/list result holding `definitions`. */
export type ListCost = { readonly tools: number; readonly bytes: number; readonly tokens: number };

function costOf(definitions: readonly JsonObject[], bytesPerToken: number): ListCost {
  const bytes = new TextEncoder().encode(JSON.stringify({ tools: definitions })).length;
  return { tools: definitions.length, bytes, tokens: Math.ceil(bytes / bytesPerToken) };
}

/**
 * The estimated cost of the server's tools/list (its picked tools under their aliases and
 * titles, glob picks included) and of the full catalog's (every tool as /mcp names it), from
 * the upstreams' own definitions: shaping, pins and catalog modes are not applied.
 */
export function listCosts(draft: Draft, bytesPerToken: number): { server: ListCost; catalog: ListCost } {
  const globs = draft.kept.tools.map((entry) => pickOf(entry).pick).filter(isGlob);
  const all: JsonObject[] = [];
  const served: JsonObject[] = [];
  for (const row of draft.rows) {
    const definition = { ...(row.entry.definition ?? {}), name: row.entry.key };
    all.push(definition);
    const description = draft.kept.descriptions[row.entry.key];
    if (row.picked)
      served.push({
        ...definition,
        name: row.alias || row.entry.key,
        ...(row.title ? { title: row.title } : {}),
        ...(description !== undefined ? { description } : {}),
      });
    else if (globs.some((glob) => matchesGlob(glob, row.entry.key))) served.push(definition);
  }
  return { server: costOf(served, bytesPerToken), catalog: costOf(all, bytesPerToken) };
}

/**
 * TypeScript declarations of tools, for code mode's `sys___search_tools`: a model writes
 * better programs against `tools.alpha.add(args: { a: number; b: number }): Promise<{ sum:
 * number }>` than against JSON Schema. The schemas are the upstreams' (untrusted), so the
 * text is bounded: nesting depth, properties per object, characters per tool; names that
 * are not identifiers are quoted or made safe, and descriptions become doc comments that
 * cannot close themselves early.
 *
 * Identifiers are chosen over the whole catalog in its order (`toolIdentifiers`), so the
 * declarations a search answers and the `tools` object a run gets always agree.
 */
import { isObject } from "../../core/jsonrpc";
import { SYS_PREFIX, splitName } from "../../core/names";
import type { Catalog, CatalogTool } from "../catalog/visible-catalog";

/** Nesting of a schema rendered as a type; deeper parts are `unknown`. */
export const MAX_TYPE_DEPTH = 6;
/** Properties of one object type rendered; the rest fall under an index signature. */
export const MAX_TYPE_PROPERTIES = 50;
/** Characters of one tool's declaration; past them the rest of its types are `unknown`. */
export const MAX_DECLARATION_CHARS = 6_000;
/** Characters of a description kept in a doc comment. */
export const MAX_DOC_CHARS = 600;
/**
 * Characters of a property name or a string literal type: a longer name falls under the
 * index signature, a longer literal is `string`.
 */
export const MAX_NAME_CHARS = 200;

/** Where a catalog tool is in the sandbox: `tools.<upstream>.<tool>`, both safe identifiers. */
export type ToolPlace = { readonly upstream: string; readonly tool: string; readonly name: string };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await arguments eval undefined NaN " +
    "Infinity constructor prototype __proto__"
  ).split(" "),
);

/** `text` as an identifier: other characters become `_`, a leading digit or reserved word gets a `_` before it. */
export function safeIdentifier(text: string): string {
  let name = text.replace(/[^A-Za-z0-9_$]/g, "_");
  if (name === "" || /^[0-9]/.test(name) || RESERVED.has(name)) name = `_${name}`;
  return name;
}

/** A unique identifier for `text` among `taken` (adds it). */
function uniqueIdentifier(text: string, taken: Set<string>): string {
  const base = safeIdentifier(text);
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

/** The tool's own name and its upstream's (on /mcp/<upstream> names pass unchanged). */
function partsOf(tool: CatalogTool): { upstream: string; own: string } {
  const split = splitName(tool.name);
  if (tool.upstream !== "" && split && split.upstream === tool.upstream)
    return { upstream: tool.upstream, own: split.name };
  return { upstream: tool.upstream || "gateway", own: tool.name };
}

/**
 * Where each tool of `catalog` is in the sandbox, keyed by the name the caller lists it under.
 *
 * @example
 * toolIdentifiers(catalog).get("alpha___add") // { upstream: "alpha", tool: "add", name: "alpha___add" }
 */
export function toolIdentifiers(catalog: Catalog): Map<string, ToolPlace> {
  const places = new Map<string, ToolPlace>();
  const upstreams = new Map<string, { id: string; taken: Set<string> }>();
  const upstreamIds = new Set<string>();
  for (const tool of catalog.tools) {
    if (tool.name.startsWith(SYS_PREFIX)) continue;
    const { upstream, own } = partsOf(tool);
    let group = upstreams.get(upstream);
    if (!group) {
      group = { id: uniqueIdentifier(upstream, upstreamIds), taken: new Set() };
      upstreams.set(upstream, group);
    }
    places.set(tool.name, { upstream: group.id, tool: uniqueIdentifier(own, group.taken), name: tool.name });
  }
  return places;
}

/** A doc comment (indented by `indent`) holding `text`, which cannot end it early. */
export function docComment(text: unknown, indent: string): string {
  if (typeof text !== "string" || text.trim() === "") return "";
  const cut = text.length > MAX_DOC_CHARS ? `${text.slice(0, MAX_DOC_CHARS)}…` : text;
  const lines = cut.replace(/\*\//g, "*\\/").split(/\r\n|\r|\n/);
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

/** Renders schemas as types within one tool's character budget. */
class TypeWriter {
  #left = MAX_DECLARATION_CHARS;

  type(schema: unknown, depth: number, indent: string): string {
    const text = this.#type(schema, depth, indent);
    this.#left -= text.length;
    return text;
  }

  #type(schema: unknown, depth: number, indent: string): string {
    if (!isObject(schema) || depth > MAX_TYPE_DEPTH || this.#left <= 0) return "unknown";
    if ("const" in schema) return literal(schema["const"]);
    if (Array.isArray(schema["enum"]))
      return schema["enum"].slice(0, MAX_TYPE_PROPERTIES).map(literal).join(" | ") || "never";
    for (const [key, joiner] of [
      ["anyOf", " | "],
      ["oneOf", " | "],
      ["allOf", " & "],
    ] as const) {
      const parts = schema[key];
      if (Array.isArray(parts) && parts.length > 0)
        return parts
          .slice(0, MAX_TYPE_PROPERTIES)
          .map((part) => `(${this.type(part, depth + 1, indent)})`)
          .join(joiner);
    }
    const type = schema["type"];
    if (Array.isArray(type))
      return type.map((one) => this.#type({ ...schema, type: one }, depth, indent)).join(" | ") || "unknown";
    switch (type) {
      case "string":
        return "string";
      case "number":
      case "integer":
        return "number";
      case "boolean":
        return "boolean";
      case "null":
        return "null";
      case "array":
        return `Array<${this.type(schema["items"], depth + 1, indent)}>`;
      case "object":
        return this.#object(schema, depth, indent);
      default:
        return isObject(schema["properties"]) ? this.#object(schema, depth, indent) : "unknown";
    }
  }

  #object(schema: Readonly<Record<string, unknown>>, depth: number, indent: string): string {
    const properties = isObject(schema["properties"]) ? Object.entries(schema["properties"]) : [];
    const required = new Set(
      Array.isArray(schema["required"]) ? schema["required"].filter((key) => typeof key === "string") : [],
    );
    const inner = `${indent}  `;
    const lines: string[] = [];
    for (const [key, value] of properties.slice(0, MAX_TYPE_PROPERTIES)) {
      if (this.#left <= 0) break;
      if (key.length > MAX_NAME_CHARS) continue;
      const name = IDENTIFIER.test(key) ? key : JSON.stringify(key);
      const doc = isObject(value) ? docComment(value["description"], inner) : "";
      const head = `${doc}${inner}${name}${required.has(key) ? "" : "?"}: `;
      // The type counts itself (type()); the name and doc comment around it count here.
      this.#left -= head.length;
      lines.push(`${head}${this.type(value, depth + 1, inner)};`);
    }
    const open =
      properties.length > lines.length ||
      schema["additionalProperties"] === true ||
      isObject(schema["additionalProperties"]);
    if (open) lines.push(`${inner}[key: string]: unknown;`);
    return lines.length === 0 ? "Record<string, unknown>" : `{\n${lines.join("\n")}\n${indent}}`;
  }
}

function literal(value: unknown): string {
  if (typeof value === "string" && value.length > MAX_NAME_CHARS) return "string";
  const simple = typeof value === "string" || typeof value === "number" || typeof value === "boolean" || value === null;
  return simple ? JSON.stringify(value) : "unknown";
}

/** One tool's declaration, as a method of its upstream's object. */
function toolDeclaration(tool: CatalogTool, place: ToolPlace, indent: string): string {
  const writer = new TypeWriter();
  const definition = tool.definition;
  const args = writer.type(definition["inputSchema"] ?? { type: "object" }, 1, indent);
  const output = isObject(definition["outputSchema"]) ? writer.type(definition["outputSchema"], 1, indent) : "unknown";
  const doc = docComment(
    `${typeof definition["description"] === "string" ? `${definition["description"]}\n` : ""}Listed as ${place.name}.`,
    indent,
  );
  return `${doc}${indent}${place.tool}(args: ${args}): Promise<${output}>;`;
}

/**
 * The declarations of `tools` as one `declare const tools: {...}` block, grouped by upstream.
 *
 * @example
 * toolDeclarations(found, toolIdentifiers(catalog))
 * // declare const tools: {\n  alpha: {\n    /** Adds two numbers ... *\/\n    add(args: {...}): Promise<{...}>;
 * //   };\n};
 */
export function toolDeclarations(tools: readonly CatalogTool[], places: ReadonlyMap<string, ToolPlace>): string {
  const groups = new Map<string, string[]>();
  for (const tool of tools) {
    const place = places.get(tool.name);
    if (!place) continue;
    const group = groups.get(place.upstream) ?? [];
    group.push(toolDeclaration(tool, place, "    "));
    groups.set(place.upstream, group);
  }
  const body = [...groups].map(([upstream, lines]) => `  ${upstream}: {\n${lines.join("\n")}\n  };`).join("\n");
  return `declare const tools: {\n${body}\n};`;
}

/**
 * While a tool's change waits for an operator, a call goes through only when its
 * arguments fit both the approved and the changed definition: what the client was
 * shown still describes the call, and the upstream gets nothing its new schema would
 * refuse (a new required parameter, a narrower type). Prompts: every required argument
 * of both versions given, and no argument either version lacks.
 *
 * The schemas are upstream text (the approved one too: an operator approved what it
 * tells the model, not its regular expressions), so the check never runs an upstream's
 * regular expression on a client's arguments: `pattern`, `patternProperties` (with the
 * `additionalProperties` of the same schema, which depends on it) and `format` are left
 * out of the copy checked, which makes the check looser, never slower than linear.
 * A schema nested past MAX_SCHEMA_DEPTH is not checked at all: the call is refused.
 */
import type { Schema, SchemaDraft } from "@cfworker/json-schema";
import { isObject, type JsonObject } from "../../core/jsonrpc";
import { MAX_DEFINITION_DEPTH } from "./pin-findings";
import { nestsDeeperThan } from "./pin-definition";
import { loadJsonSchemaLibrary, type JsonSchemaLibrary } from "../../storage/json-schema-library";

/** Validation errors named in a refusal. */
const MAX_REASONS = 3;
/** Levels of a schema the check follows (the same bound as the findings scan's). */
const MAX_SCHEMA_DEPTH = MAX_DEFINITION_DEPTH;
/** Keywords whose value is a regular expression or names one (format), left out of the checked copy. */
const REGEX_KEYWORDS: ReadonlySet<string> = new Set(["pattern", "patternProperties", "format"]);

/**
 * A copy of `schema` without the keywords that run upstream regular expressions (TOO_DEEP
 * when it nests past MAX_SCHEMA_DEPTH). The members of a map of names to schemas
 * (`properties`, `$defs`, …) are names, not keywords: a property called "format" stays;
 * `const`, `enum`, `default` and `examples` hold values, copied as they are.
 */
function withoutRegexes(value: unknown, depth = 0, names = false): unknown {
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_SCHEMA_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const copy = withoutRegexes(item, depth + 1);
      if (copy === TOO_DEEP) return TOO_DEEP;
      out.push(copy);
    }
    return out;
  }
  const object = value as JsonObject;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(object)) {
    if (!names && REGEX_KEYWORDS.has(key)) continue;
    if (!names && key === "additionalProperties" && Object.hasOwn(object, "patternProperties")) continue;
    const data = !names && DATA_KEYWORDS.has(key); // values, not schemas: copied as they are
    const copy = data
      ? nestsDeeperThan(item, MAX_SCHEMA_DEPTH - depth)
        ? TOO_DEEP
        : item
      : withoutRegexes(item, depth + 1, !names && NAME_MAPS.has(key));
    if (copy === TOO_DEEP) return TOO_DEEP;
    out[key] = copy as JsonObject[string];
  }
  return out;
}

/** Keywords whose value maps names to schemas. */
const NAME_MAPS: ReadonlySet<string> = new Set([
  "properties",
  "$defs",
  "definitions",
  "dependentSchemas",
  "dependencies",
]);
/** Keywords whose value is an instance, not a schema. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "enum", "default", "examples"]);

/** withoutRegexes' answer for a schema nested too deep. */
const TOO_DEEP: unique symbol = Symbol("too deep");

function draftOf(schema: JsonObject): SchemaDraft {
  const dialect = typeof schema["$schema"] === "string" ? schema["$schema"] : "";
  if (dialect.includes("draft-04")) return "4";
  if (dialect.includes("draft-07") || dialect.includes("draft-06")) return "7";
  if (dialect.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/** Why `args` do not fit the input schema of `definition`; undefined when they fit. */
function toolMisfit(definition: JsonObject, args: JsonObject, { Validator }: JsonSchemaLibrary): string | undefined {
  const schema = definition["inputSchema"];
  if (!isObject(schema)) return undefined;
  const checked = withoutRegexes(schema);
  if (!isObject(checked)) return `the schema nests past ${MAX_SCHEMA_DEPTH} levels and is not checked`;
  try {
    const result = new Validator(checked as Schema, draftOf(schema), false).validate(args);
    if (result.valid) return undefined;
    return (
      result.errors
        .filter((error) => error.keyword !== "properties" && error.keyword !== "$ref")
        .slice(0, MAX_REASONS)
        .map((error) => `${error.instanceLocation}: ${error.error}`)
        .join("; ") || "the arguments do not match"
    );
  } catch (error) {
    return `the schema could not be applied (${error instanceof Error ? error.message : String(error)})`;
  }
}

function promptMisfit(definition: JsonObject, args: JsonObject): string | undefined {
  const declared = Array.isArray(definition["arguments"]) ? definition["arguments"].filter(isObject) : [];
  const names = new Set(declared.map((argument) => argument["name"]));
  for (const argument of declared)
    if (argument["required"] === true && !Object.hasOwn(args, String(argument["name"])))
      return `argument "${String(argument["name"])}" is required`;
  for (const name of Object.keys(args)) if (!names.has(name)) return `argument "${name}" is not declared`;
  return undefined;
}

/**
 * Why the arguments do not fit both versions (naming the version), or undefined when they do.
 *
 * @example
 * await argumentsMisfit("tool", approved, changed, { a: 1 }); // "the changed definition: /: Instance does not have required property \"b\"."
 */
export async function argumentsMisfit(
  kind: "tool" | "prompt",
  approved: JsonObject,
  changed: JsonObject,
  args: JsonObject,
): Promise<string | undefined> {
  const library = kind === "tool" ? await loadJsonSchemaLibrary() : undefined;
  const misfit = (definition: JsonObject) =>
    library ? toolMisfit(definition, args, library) : promptMisfit(definition, args);
  const before = misfit(approved);
  if (before !== undefined) return `the approved definition: ${before}`;
  const after = misfit(changed);
  return after === undefined ? undefined : `the changed definition: ${after}`;
}

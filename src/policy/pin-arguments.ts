/**
 * While a tool's change waits for an operator, a call goes through only when its
 * arguments fit both the approved and the changed definition: what the client was
 * shown still describes the call, and the upstream gets nothing its new schema would
 * refuse (a new required parameter, a narrower type). Prompts: every required argument
 * of both versions given, and no argument either version lacks.
 */
import { Validator, type Schema, type SchemaDraft } from "@cfworker/json-schema";
import { isObject, type JsonObject } from "../core/jsonrpc";

/** Validation errors named in a refusal. */
const MAX_REASONS = 3;

function draftOf(schema: JsonObject): SchemaDraft {
  const dialect = typeof schema["$schema"] === "string" ? schema["$schema"] : "";
  if (dialect.includes("draft-04")) return "4";
  if (dialect.includes("draft-07") || dialect.includes("draft-06")) return "7";
  if (dialect.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/** Why `args` do not fit the input schema of `definition`; undefined when they fit. */
function toolMisfit(definition: JsonObject, args: JsonObject): string | undefined {
  const schema = definition["inputSchema"];
  if (!isObject(schema)) return undefined;
  try {
    const result = new Validator(schema as Schema, draftOf(schema), false).validate(args);
    if (result.valid) return undefined;
    return result.errors
      .filter((error) => error.keyword !== "properties" && error.keyword !== "$ref")
      .slice(0, MAX_REASONS)
      .map((error) => `${error.instanceLocation}: ${error.error}`)
      .join("; ") || "the arguments do not match";
  } catch (error) {
    return `the schema could not be applied (${error instanceof Error ? error.message : String(error)})`;
  }
}

function promptMisfit(definition: JsonObject, args: JsonObject): string | undefined {
  const declared = Array.isArray(definition["arguments"]) ? definition["arguments"].filter(isObject) : [];
  const names = new Set(declared.map((argument) => argument["name"]));
  for (const argument of declared) if (argument["required"] === true && !Object.hasOwn(args, String(argument["name"]))) return `argument "${String(argument["name"])}" is required`;
  for (const name of Object.keys(args)) if (!names.has(name)) return `argument "${name}" is not declared`;
  return undefined;
}

/**
 * Why the arguments do not fit both versions (naming the version), or undefined when they do.
 *
 * @example
 * argumentsMisfit("tool", approved, changed, { a: 1 }); // "the changed definition: /: Instance does not have required property \"b\"."
 */
export function argumentsMisfit(kind: "tool" | "prompt", approved: JsonObject, changed: JsonObject, args: JsonObject): string | undefined {
  const misfit = kind === "tool" ? toolMisfit : promptMisfit;
  const before = misfit(approved, args);
  if (before !== undefined) return `the approved definition: ${before}`;
  const after = misfit(changed, args);
  return after === undefined ? undefined : `the changed definition: ${after}`;
}

/**
 * The gateway's catalog tools as listed: `sys___describe_tools` (compact mode) answers
 * full definitions of tools listed short; `sys___search_tools` and `sys___call_tool`
 * (search mode) find tools that are not listed and run them.
 */
import { SYS_PREFIX } from "../../core/names";

export const SEARCH_TOOLS = `${SYS_PREFIX}search_tools`;
export const CALL_TOOL = `${SYS_PREFIX}call_tool`;
export const DESCRIBE_TOOLS = `${SYS_PREFIX}describe_tools`;
/** The catalog tools' names: answered by the catalog layer, never by sys___call_tool. */
export const CATALOG_TOOLS: ReadonlySet<string> = new Set([SEARCH_TOOLS, CALL_TOOL, DESCRIBE_TOOLS]);

/** Most tools a search answers, and its default. */
export const MAX_SEARCH_LIMIT = 20;
/** Longest query a search takes, in characters. */
export const MAX_QUERY_CHARS = 1_000;
export const DEFAULT_SEARCH_LIMIT = 5;
/** Most names one describe call takes. */
export const MAX_DESCRIBE_NAMES = 50;

/**
 * The input schema of `sys___search_tools`, in the search mode ("answer": full definitions)
 * and the code mode ("declare": TypeScript declarations, features/code-mode/).
 */
export function searchInputSchema(verb: "answer" | "declare") {
  return {
    type: "object",
    properties: {
      query: { type: "string", description: "the task, in words" },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: MAX_SEARCH_LIMIT,
        description: `how many tools to ${verb} (default ${DEFAULT_SEARCH_LIMIT})`,
      },
      upstream: { type: "string", description: "only tools of this upstream server" },
    },
    required: ["query"],
  };
}

export const SEARCH_TOOLS_DEFINITION = {
  name: SEARCH_TOOLS,
  title: "Search the tools",
  description:
    "Finds the tools that serve a task among every tool you may use (they are not listed). Describe the task in words " +
    '(e.g. "close the bug about the login page"); the answer gives the best matches with their full definitions and how many matched. ' +
    `Run one with ${CALL_TOOL}.`,
  inputSchema: searchInputSchema("answer"),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const CALL_TOOL_DEFINITION = {
  name: CALL_TOOL,
  title: "Call a tool found by search",
  description: `Runs a tool found with ${SEARCH_TOOLS}, by its name, with arguments that follow its inputSchema; answers what the tool answers.`,
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: `the tool's name as ${SEARCH_TOOLS} gave it` },
      arguments: { type: "object", description: "the tool's arguments" },
      argumentsFrom: {
        type: "object",
        description:
          'arguments read from results the gateway stored for you (payloadId), by pointer: {"/items": {"payload": "<payloadId>", "pointer": "/items"}}',
        additionalProperties: {
          type: "object",
          properties: { payload: { type: "string" }, pointer: { type: "string" } },
          required: ["payload"],
        },
      },
    },
    required: ["name"],
  },
};

export const DESCRIBE_TOOLS_DEFINITION = {
  name: DESCRIBE_TOOLS,
  title: "Describe tools in full",
  description:
    "Answers the full definitions (description, schemas with every property's description) of listed tools, by name.",
  inputSchema: {
    type: "object",
    properties: {
      names: {
        type: "array",
        items: { type: "string" },
        minItems: 1,
        maxItems: MAX_DESCRIBE_NAMES,
        description: "tool names as listed",
      },
    },
    required: ["names"],
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

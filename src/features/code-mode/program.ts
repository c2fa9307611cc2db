/**
 * Prepares a code-mode program for the sandbox: parses it (acorn) as the body of an async
 * function, refuses what it must not use, and adds a step count at the start of every loop
 * body and every function body. The count (`STEP_FUNCTION`, imported from a module of the
 * sandbox's own, so the program cannot reassign it) throws once the run has taken
 * RUN_STEP_LIMIT steps, and keeps throwing: a `catch` inside a loop cannot swallow it, as
 * the next iteration counts again. The platform's CPU limit is the bound where it is
 * enforced; this one holds under `wrangler dev` too, where a loop that never yields would
 * hold the only thread of every isolate.
 *
 * Insertions add no line breaks, so a line of the prepared text is the line the model wrote.
 * This file is bundled with acorn into a module of its own (scripts/build-yaml-module.mjs,
 * storage/code-mode-library.ts), so only an isolate that runs a program parses acorn.
 */
import { parse, type Node } from "acorn";

/** The function the prepared text calls at each step; the program may not name it. */
export const STEP_FUNCTION = "__gatewayStep";

/** A program ready for the sandbox, or why it is not. */
export type PreparedProgram =
  | { readonly ok: true; readonly body: string }
  | { readonly ok: false; readonly message: string; readonly line?: number };

type Insertion = { readonly at: number; readonly text: string; readonly depth: number; readonly closes: boolean };

/** Nodes under `node` (its child nodes, in arrays or not). */
function* children(node: Node): Generator<Node> {
  for (const [key, value] of Object.entries(node)) {
    if (key === "loc" || key === "range") continue;
    const items: unknown[] = Array.isArray(value) ? value : [value];
    for (const item of items) {
      if (typeof item === "object" && item !== null && typeof (item as { type?: unknown }).type === "string")
        yield item as Node;
    }
  }
}

const LOOPS = new Set(["WhileStatement", "DoWhileStatement", "ForStatement", "ForInStatement", "ForOfStatement"]);
const FUNCTIONS = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/** Counts a step before `body` runs: inside its braces, or in braces (parentheses for an arrow's body) of its own. */
function guard(body: Node, depth: number, expression: boolean, into: Insertion[]): void {
  const step = `${STEP_FUNCTION}();`;
  if (body.type === "BlockStatement") {
    into.push({ at: body.start + 1, text: step, depth, closes: false });
  } else if (expression) {
    into.push(
      { at: body.start, text: `(${STEP_FUNCTION}(), `, depth, closes: false },
      { at: body.end, text: ")", depth, closes: true },
    );
  } else {
    into.push(
      { at: body.start, text: `{${step}`, depth, closes: false },
      { at: body.end, text: "}", depth, closes: true },
    );
  }
}

/** Walks the tree (iteratively: a deep program must not overflow the host's stack); a refusal, if any. */
function instrument(root: Node, into: Insertion[]): { message: string; at: number } | undefined {
  const stack: { node: Node; depth: number }[] = [{ node: root, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (node.type === "Identifier" && (node as Node & { name: string }).name === STEP_FUNCTION)
      return { message: `the name ${STEP_FUNCTION} is the gateway's`, at: node.start };
    if (node.type === "ImportExpression")
      return { message: "import() is not available in code mode: use the tools object", at: node.start };
    if (LOOPS.has(node.type)) guard((node as Node & { body: Node }).body, depth, false, into);
    if (FUNCTIONS.has(node.type)) {
      const fn = node as Node & { body: Node; expression?: boolean };
      guard(fn.body, depth, fn.body.type !== "BlockStatement", into);
    }
    for (const child of children(node)) stack.push({ node: child, depth: depth + 1 });
  }
  return undefined;
}

/** The line of `offset` in `text` (1-based). */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/**
 * `code`, the body of an async function, prepared for the sandbox.
 *
 * @example
 * prepareProgram("while (true) {}") // { ok: true, body: "while (true) {__gatewayStep();}" }
 */
export function prepareProgram(code: string): PreparedProgram {
  let tree: Node;
  try {
    tree = parse(code, {
      ecmaVersion: "latest",
      sourceType: "script",
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
      locations: true,
    });
  } catch (error) {
    const { message, loc } = error as { message: string; loc?: { line: number } };
    // acorn ends its messages with "(line:column)": the line is given apart.
    return {
      ok: false,
      message: `SyntaxError: ${message.replace(/\s*\(\d+:\d+\)$/, "")}`,
      ...(loc ? { line: loc.line } : {}),
    };
  }
  const insertions: Insertion[] = [];
  const refused = instrument(tree, insertions);
  if (refused) return { ok: false, message: `Refused: ${refused.message}`, line: lineAt(code, refused.at) };
  // At one offset, closings come first (innermost first), then openings (outermost first).
  insertions.sort(
    (a, b) => a.at - b.at || Number(b.closes) - Number(a.closes) || (a.closes ? b.depth - a.depth : a.depth - b.depth),
  );
  let body = "";
  let from = 0;
  for (const insertion of insertions) {
    body += code.slice(from, insertion.at) + insertion.text;
    from = insertion.at;
  }
  return { ok: true, body: body + code.slice(from) };
}

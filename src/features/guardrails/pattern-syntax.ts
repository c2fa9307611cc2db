/**
 * The operator's pattern language read into a tree (safe-pattern.ts compiles and runs it):
 * literal characters, `.`, `\d \w \s \D \W \S`, escapes, classes, groups, alternation and
 * bounded repetition; no anchors, backreferences or lookaround. Every error names what is
 * wrong and where (the character it was found at).
 */

/** The largest count a `{n,m}` repetition may name. */
export const MAX_REPEAT = 100;
/** A set of UTF-16 code units: ranges as [from, to] pairs, possibly negated. */
export type CharSet = { readonly ranges: readonly number[]; readonly negated: boolean };
/** A pattern read: characters (sets), sequences, alternatives and repetitions (`max` Infinity when unbounded). */
export type Node =
  | { readonly kind: "char"; readonly set: CharSet }
  | { readonly kind: "cat"; readonly items: readonly Node[] }
  | { readonly kind: "alt"; readonly options: readonly Node[] }
  | { readonly kind: "repeat"; readonly node: Node; readonly min: number; readonly max: number };

export class PatternError extends Error {
  override readonly name = "PatternError";
}

const DIGIT = [0x30, 0x39];
const WORD = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const SPACE = [0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x2028, 0x2029];
const CLASS_ESCAPES: Record<string, CharSet> = {
  d: { ranges: DIGIT, negated: false },
  w: { ranges: WORD, negated: false },
  s: { ranges: SPACE, negated: false },
  D: { ranges: DIGIT, negated: true },
  W: { ranges: WORD, negated: true },
  S: { ranges: SPACE, negated: true },
};
const LITERAL_ESCAPES: Record<string, number> = { n: 0x0a, t: 0x09, r: 0x0d };
const ESCAPABLE = new Set([..."\\.()[]{}*+?|-/^$ \"'#&~"]);

function single(code: number): CharSet {
  return { ranges: [code, code], negated: false };
}

function folded(set: CharSet): CharSet {
  const ranges = [...set.ranges];
  for (let i = 0; i < set.ranges.length; i += 2) {
    const [from, to] = [set.ranges[i]!, set.ranges[i + 1]!];
    const [lo, hi] = [Math.max(from, 0x41), Math.min(to, 0x5a)];
    if (lo <= hi) ranges.push(lo + 32, hi + 32);
    const [lo2, hi2] = [Math.max(from, 0x61), Math.min(to, 0x7a)];
    if (lo2 <= hi2) ranges.push(lo2 - 32, hi2 - 32);
  }
  return { ranges, negated: set.negated };
}

/** Reads a pattern into a tree; throws PatternError saying where it is wrong. */
export function parse(source: string, ignoreCase: boolean): Node {
  let at = 0;
  const fail = (message: string): never => {
    throw new PatternError(`${message} at character ${at + 1}`);
  };
  const charSet = (set: CharSet): Node => ({ kind: "char", set: ignoreCase ? folded(set) : set });
  const readEscape = (inClass: boolean): CharSet | number => {
    const c = source[at++];
    if (c === undefined) return fail("a pattern cannot end with \\");
    if (!inClass && CLASS_ESCAPES[c]) return CLASS_ESCAPES[c]!;
    if (inClass && CLASS_ESCAPES[c] && !CLASS_ESCAPES[c]!.negated) return CLASS_ESCAPES[c]!;
    if (LITERAL_ESCAPES[c] !== undefined) return LITERAL_ESCAPES[c]!;
    if (ESCAPABLE.has(c)) return c.charCodeAt(0);
    return fail(`\\${c} is not supported (anchors, backreferences and lookaround are not part of the language)`);
  };
  const classBody = (): CharSet => {
    const negated = source[at] === "^";
    if (negated) at++;
    const ranges: number[] = [];
    let first = true;
    while (source[at] !== "]" || first) {
      first = false;
      if (at >= source.length) fail("unclosed [");
      const c = source[at++]!;
      const item = c === "\\" ? readEscape(true) : c.charCodeAt(0);
      if (typeof item !== "number") {
        ranges.push(...item.ranges);
        continue;
      }
      if (source[at] === "-" && source[at + 1] !== "]" && at + 1 < source.length) {
        at++;
        const d = source[at++]!;
        const to = d === "\\" ? readEscape(true) : d.charCodeAt(0);
        if (typeof to !== "number" || to < item) fail("a class range must run from a lower character to a higher one");
        ranges.push(item, to as number);
      } else ranges.push(item, item);
    }
    at++;
    return { ranges, negated };
  };
  const count = (): number => {
    const digits = /^\d{1,4}/.exec(source.slice(at, at + 4))?.[0];
    if (digits === undefined) return fail("expected a number in {…}");
    at += digits.length;
    const value = Number(digits);
    if (value > MAX_REPEAT) fail(`a repetition count is at most ${MAX_REPEAT}`);
    return value;
  };
  const atom = (): Node => {
    const c = source[at++]!;
    if (c === "(") {
      const inner = alternation();
      if (source[at++] !== ")") fail("unclosed (");
      return inner;
    }
    if (c === "[") return charSet(classBody());
    if (c === ".") return { kind: "char", set: { ranges: [0x0a, 0x0a], negated: true } };
    if (c === "\\") {
      const item = readEscape(false);
      return charSet(typeof item === "number" ? single(item) : item);
    }
    if ("*+?{".includes(c)) return fail(`nothing to repeat before ${c}`);
    if (c === ")" || c === "]" || c === "}") return fail(`unmatched ${c}`);
    if (c === "^" || c === "$") return fail("anchors (^, $) are not part of the language");
    return charSet(single(c.charCodeAt(0)));
  };
  const repeated = (): Node => {
    let node = atom();
    for (;;) {
      const c = source[at];
      let [min, max] = [-1, -1];
      if (c === "*") [min, max] = [0, Infinity];
      else if (c === "+") [min, max] = [1, Infinity];
      else if (c === "?") [min, max] = [0, 1];
      else if (c === "{") {
        at++;
        min = count();
        max = min;
        if (source[at] === ",") {
          at++;
          max = source[at] === "}" ? Infinity : count();
        }
        if (source[at] !== "}") fail("unclosed {");
        if (max < min) fail("{n,m} needs n <= m");
      } else return node;
      at++;
      node = { kind: "repeat", node, min, max };
    }
  };
  const sequence = (): Node => {
    const items: Node[] = [];
    while (at < source.length && source[at] !== "|" && source[at] !== ")") items.push(repeated());
    return { kind: "cat", items };
  };
  const alternation = (): Node => {
    const options = [sequence()];
    while (source[at] === "|") {
      at++;
      options.push(sequence());
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  };
  const tree = alternation();
  if (at < source.length) fail(`unmatched ${source[at]}`);
  return tree;
}

/** The states `node` compiles to, at most `cap + 1` (counted before anything is built). */
export function sizeOf(node: Node, cap: number): number {
  switch (node.kind) {
    case "char":
      return 1;
    case "cat":
      return Math.min(
        cap + 1,
        node.items.reduce((sum, item) => sum + sizeOf(item, cap), 0),
      );
    case "alt":
      return Math.min(
        cap + 1,
        node.options.reduce((sum, option) => sum + sizeOf(option, cap) + 1, 0),
      );
    case "repeat": {
      const copies = node.max === Infinity ? Math.max(node.min, 1) : node.max;
      return Math.min(cap + 1, copies * (sizeOf(node.node, cap) + 1) + 1);
    }
  }
}

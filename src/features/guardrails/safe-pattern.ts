/**
 * Operator-defined patterns, matched in time linear in the text whatever the pattern and
 * the text: a small regular-expression language (no backreferences, no lookaround, no
 * anchors) compiled to a Thompson automaton and run as a set of states (each position of
 * the text moves every live state once), never by backtracking. An operator's pattern
 * such as `(a+)+b` or an upstream's text of a million `a`s costs at most
 * (text length + 1) × (states) steps; the states are bounded by `MAX_PATTERN_STATES`.
 *
 * The language: literal characters; `.` (any but a line feed); `\d \w \s \D \W \S`;
 * escapes `\. \\ \( \[ \{ \* \+ \? \| \- \/ \n \t`; classes `[a-z0-9_]`, `[^…]`; groups
 * `( … )`; alternation `|`; repetition `* + ?` and `{n}`, `{n,}`, `{n,m}` with n, m at most
 * `MAX_REPEAT`. Matches cover the text any match of the pattern covers (see `coveredSpans`).
 */

/** The most states a compiled pattern may have (each costs one step per character of text). */
export const MAX_PATTERN_STATES = 2_000;
/** The largest count a `{n,m}` repetition may name. */
export const MAX_REPEAT = 100;
/** The longest pattern source, in characters. */
export const MAX_PATTERN_CHARS = 512;

/** A set of UTF-16 code units: ranges as [from, to] pairs, possibly negated. */
type CharSet = { readonly ranges: readonly number[]; readonly negated: boolean };
type Node =
  | { readonly kind: "char"; readonly set: CharSet }
  | { readonly kind: "cat"; readonly items: readonly Node[] }
  | { readonly kind: "alt"; readonly options: readonly Node[] }
  | { readonly kind: "repeat"; readonly node: Node; readonly min: number; readonly max: number };

/** A compiled pattern: states as parallel arrays (`sets[i]` undefined for a split or the accepting state). */
export type SafePattern = {
  readonly start: number;
  readonly accept: number;
  readonly sets: readonly (CharSet | undefined)[];
  readonly out: Int32Array;
  readonly out2: Int32Array;
};

/** Counts the steps of a run, for tests that show the time is linear. */
export type StepMeter = { steps: number };

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
function parse(source: string, ignoreCase: boolean): Node {
  let at = 0;
  const fail = (message: string): never => {
    throw new PatternError(`${message} at character ${at + 1}`);
  };
  const charSet = (set: CharSet): Node => ({ kind: "char", set: ignoreCase ? folded(set) : set });
  const escape = (inClass: boolean): CharSet | number => {
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
      const item = c === "\\" ? escape(true) : c.charCodeAt(0);
      if (typeof item !== "number") {
        ranges.push(...item.ranges);
        continue;
      }
      if (source[at] === "-" && source[at + 1] !== "]" && at + 1 < source.length) {
        at++;
        const d = source[at++]!;
        const to = d === "\\" ? escape(true) : d.charCodeAt(0);
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
      const item = escape(false);
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
function sizeOf(node: Node, cap: number): number {
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

/**
 * Compiles `source` (see the header for the language); throws PatternError naming what is
 * wrong, or that it would need more than MAX_PATTERN_STATES states.
 *
 * @example
 * const pattern = compilePattern("ACME-[0-9]{6}");
 * coveredSpans(pattern, "order ACME-123456 shipped") // [{ start: 6, end: 17 }]
 */
export function compilePattern(source: string, ignoreCase = false): SafePattern {
  if (source.length === 0 || source.length > MAX_PATTERN_CHARS)
    throw new PatternError(`a pattern is 1 to ${MAX_PATTERN_CHARS} characters`);
  const tree = parse(source, ignoreCase);
  if (sizeOf(tree, MAX_PATTERN_STATES) > MAX_PATTERN_STATES)
    throw new PatternError(`the pattern needs more than ${MAX_PATTERN_STATES} states; use smaller repetition counts`);
  const sets: (CharSet | undefined)[] = [];
  const out: number[] = [];
  const out2: number[] = [];
  const state = (set: CharSet | undefined): number => {
    sets.push(set);
    out.push(-1);
    out2.push(-1);
    return sets.length - 1;
  };
  // A fragment: its entry state and the dangling exits (state, slot) to patch to what follows.
  type Fragment = { start: number; exits: [number, 1 | 2][] };
  const patch = (exits: readonly [number, 1 | 2][], to: number) => {
    for (const [s, slot] of exits) (slot === 1 ? out : out2)[s] = to;
  };
  const empty = (): Fragment => {
    const s = state(undefined);
    return { start: s, exits: [[s, 1]] };
  };
  const build = (node: Node): Fragment => {
    switch (node.kind) {
      case "char": {
        const s = state(node.set);
        return { start: s, exits: [[s, 1]] };
      }
      case "cat": {
        if (node.items.length === 0) return empty();
        const parts = node.items.map(build);
        for (let i = 0; i + 1 < parts.length; i++) patch(parts[i]!.exits, parts[i + 1]!.start);
        return { start: parts[0]!.start, exits: parts[parts.length - 1]!.exits };
      }
      case "alt": {
        const parts = node.options.map(build);
        let start = parts[parts.length - 1]!.start;
        for (let i = parts.length - 2; i >= 0; i--) {
          const split = state(undefined);
          out[split] = parts[i]!.start;
          out2[split] = start;
          start = split;
        }
        return { start, exits: parts.flatMap((p) => p.exits) };
      }
      case "repeat": {
        const parts: Fragment[] = [];
        for (let i = 0; i < node.min; i++) parts.push(build(node.node));
        if (node.max === Infinity) {
          const loop = state(undefined);
          const body = build(node.node);
          out[loop] = body.start;
          patch(body.exits, loop);
          parts.push({ start: loop, exits: [[loop, 2]] });
        } else {
          for (let i = node.min; i < node.max; i++) {
            const skip = state(undefined);
            const body = build(node.node);
            out[skip] = body.start;
            parts.push({ start: skip, exits: [...body.exits, [skip, 2]] });
          }
        }
        if (parts.length === 0) return empty();
        for (let i = 0; i + 1 < parts.length; i++) patch(parts[i]!.exits, parts[i + 1]!.start);
        return { start: parts[0]!.start, exits: parts[parts.length - 1]!.exits };
      }
    }
  };
  const whole = build(tree);
  const accept = state(undefined);
  patch(whole.exits, accept);
  return { start: whole.start, accept, sets, out: Int32Array.from(out), out2: Int32Array.from(out2) };
}

function inSet(set: CharSet, code: number): boolean {
  let found = false;
  for (let i = 0; i < set.ranges.length && !found; i += 2) found = code >= set.ranges[i]! && code <= set.ranges[i + 1]!;
  return found !== set.negated;
}

/** The sets a match's first character is read by; undefined when the pattern matches the empty text. */
function firstSets(pattern: SafePattern): CharSet[] | undefined {
  const sets: CharSet[] = [];
  const seen = new Set<number>();
  const stack = [pattern.start];
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (s < 0 || seen.has(s)) continue;
    seen.add(s);
    if (s === pattern.accept) return undefined;
    const set = pattern.sets[s];
    if (set !== undefined) sets.push(set);
    else stack.push(pattern.out[s]!, pattern.out2[s]!);
  }
  return sets;
}

/**
 * Every stretch of `text` that some match of `pattern` covers, merged, in order: one pass
 * over the text, each position moving each live state once (a state reached from two
 * starts keeps the earlier one, so the match ending at a position is the longest one).
 * Empty matches cover nothing. Steps are added to `meter` when given.
 */
export function coveredSpans(pattern: SafePattern, text: string, meter?: StepMeter): { start: number; end: number }[] {
  const count = pattern.sets.length;
  const seen = new Int32Array(count).fill(-1);
  let current: number[] = [];
  let currentStarts: number[] = [];
  let next: number[] = [];
  let nextStarts: number[] = [];
  const spans: { start: number; end: number }[] = [];
  let steps = 0;
  const stack: number[] = [];
  // Adds `s` and what it reaches without reading, once per generation.
  const add = (list: number[], starts: number[], s: number, from: number, generation: number) => {
    stack.push(s);
    while (stack.length > 0) {
      const t = stack.pop()!;
      if (t < 0 || seen[t] === generation) continue;
      seen[t] = generation;
      steps++;
      if (pattern.sets[t] !== undefined || t === pattern.accept) {
        list.push(t);
        starts.push(from);
      } else {
        stack.push(pattern.out2[t]!, pattern.out[t]!);
      }
    }
  };
  const cover = (start: number, end: number) => {
    if (end <= start) return;
    while (spans.length > 0 && spans[spans.length - 1]!.end >= start) start = Math.min(start, spans.pop()!.start);
    spans.push({ start, end });
  };
  const first = firstSets(pattern);
  for (let i = 0; i <= text.length; i++) {
    // With no match under way, characters no match can begin with are passed over (one set test each).
    if (current.length === 0 && first !== undefined) {
      while (i < text.length && !first.some((set) => inSet(set, text.charCodeAt(i)))) {
        i++;
        steps++;
      }
    }
    // Generation i: the states stepped into position i are marked i, so a start here never duplicates them.
    add(current, currentStarts, pattern.start, i, i);
    for (let k = 0; k < current.length; k++) {
      if (current[k] === pattern.accept) {
        cover(currentStarts[k]!, i);
        break;
      }
    }
    if (i === text.length) break;
    const code = text.charCodeAt(i);
    for (let k = 0; k < current.length; k++) {
      const s = current[k]!;
      steps++;
      const set = pattern.sets[s];
      if (set !== undefined && inSet(set, code)) add(next, nextStarts, pattern.out[s]!, currentStarts[k]!, i + 1);
    }
    [current, next, currentStarts, nextStarts] = [next, current, nextStarts, currentStarts];
    next.length = 0;
    nextStarts.length = 0;
  }
  if (meter) meter.steps += steps;
  return spans;
}

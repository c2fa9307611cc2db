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
import { parse, PatternError, sizeOf, type CharSet, type Node } from "./pattern-syntax";

export { MAX_REPEAT, PatternError } from "./pattern-syntax";

/** The most states a compiled pattern may have (each costs one step per character of text). */
export const MAX_PATTERN_STATES = 2_000;
/** The longest pattern source, in characters. */
export const MAX_PATTERN_CHARS = 512;

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

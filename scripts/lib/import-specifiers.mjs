/**
 * The module specifiers a JavaScript or TypeScript file imports, for scripts/import-graph.mjs:
 * static and type-only imports, side-effect imports, dynamic `import("…")` and `export … from`.
 * One pass of a small lexer that knows comments, strings, template literals and regular
 * expressions, so an `import` written in a comment or a string is not taken for one.
 */

/** After these tokens a `/` starts a regular expression, not a division. */
const BEFORE_EXPRESSION = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw"]);
const BEFORE_EXPRESSION_TOO = new Set(["case", "do", "else", "yield", "await", "extends"]);
/** Tokens that may sit between `import`/`export` and `from`. */
const CLAUSE_PUNCTUATION = new Set(["{", "}", ",", "*"]);

/**
 * The tokens of a file that matter to imports: names, string literals and punctuation.
 * Comments, template literals and regular expressions are skipped. A quoted string or a
 * regular expression ends at a line break, so JSX text with an apostrophe in it hides
 * nothing on the lines that follow.
 * @param {string} text
 * @returns {{ kind: "name" | "string" | "punct", value: string }[]}
 */
export function tokenize(text) {
  const tokens = [];
  /** Open template literals, each with the `{` depth of the `${` expression it is in. */
  const templates = [];
  let i = 0;
  const previous = () => tokens[tokens.length - 1];
  const regexMayStart = () => {
    const last = previous();
    if (last === undefined) return true;
    if (last.kind === "punct") return !(last.value === ")" || last.value === "]" || last.value === "}");
    if (last.kind === "name") return BEFORE_EXPRESSION.has(last.value) || BEFORE_EXPRESSION_TOO.has(last.value);
    return false;
  };
  /** Skips a template's text from `i` (just after "`" or "}") to its end or its next `${`. */
  const templateText = () => {
    while (i < text.length) {
      const c = text[i];
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        templates.pop();
        return;
      } else if (c === "$" && text[i + 1] === "{") {
        i += 2;
        templates[templates.length - 1] = 0;
        return;
      } else i++;
    }
  };
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") i++;
    else if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (c === '"' || c === "'") {
      let value = "";
      i++;
      while (i < text.length && text[i] !== c && text[i] !== "\n") {
        if (text[i] === "\\") i++;
        value += text[i] ?? "";
        i++;
      }
      i++;
      tokens.push({ kind: "string", value });
    } else if (c === "`") {
      i++;
      templates.push(-1);
      templateText();
      tokens.push({ kind: "string", value: "" });
    } else if (c === "/" && regexMayStart()) {
      let inClass = false;
      i++;
      while (i < text.length && text[i] !== "\n" && (inClass || text[i] !== "/")) {
        if (text[i] === "\\") i++;
        else if (text[i] === "[") inClass = true;
        else if (text[i] === "]") inClass = false;
        i++;
      }
      i++;
      while (i < text.length && /[a-z]/.test(text[i])) i++;
      tokens.push({ kind: "string", value: "" });
    } else if (/[\p{ID_Start}$_0-9]/u.test(c)) {
      const start = i;
      while (i < text.length && /[\p{ID_Continue}$\u200c\u200d]/u.test(text[i])) i++;
      tokens.push({ kind: "name", value: text.slice(start, i) });
    } else if (templates.length > 0 && templates[templates.length - 1] >= 0 && (c === "{" || c === "}")) {
      // Inside a template's `${…}`: braces nest until the one that closes the expression.
      i++;
      if (c === "{") templates[templates.length - 1]++;
      else if (templates[templates.length - 1] > 0) templates[templates.length - 1]--;
      else {
        templateText();
        continue;
      }
      tokens.push({ kind: "punct", value: c });
    } else {
      i++;
      tokens.push({ kind: "punct", value: c });
    }
  }
  return tokens;
}

/**
 * The module specifiers a file imports or re-exports from, in order.
 * @param {string} text
 * @returns {string[]}
 */
export function importedSpecifiers(text) {
  const tokens = tokenize(text);
  const specifiers = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.kind !== "name" || (token.value !== "import" && token.value !== "export")) continue;
    if (tokens[i - 1]?.kind === "punct" && tokens[i - 1].value === ".") continue;
    const next = tokens[i + 1];
    if (token.value === "import" && next?.kind === "string") {
      specifiers.push(next.value);
      continue;
    }
    if (token.value === "import" && next?.value === "(") {
      if (tokens[i + 2]?.kind === "string") specifiers.push(tokens[i + 2].value);
      continue;
    }
    if (token.value === "export" && !(next?.value === "*" || next?.value === "{" || next?.value === "type")) continue;
    // A clause: names, braces, commas and `*`, up to `from "…"`; anything else ends it.
    let j = i + 1;
    while (j < tokens.length) {
      const t = tokens[j];
      if (t.kind === "name" && (t.value === "import" || t.value === "export")) {
        j--;
        break;
      }
      if (t.kind === "name" && t.value === "from" && tokens[j + 1]?.kind === "string") {
        specifiers.push(tokens[j + 1].value);
        j++;
        break;
      }
      if (t.kind === "name" || (t.kind === "punct" && CLAUSE_PUNCTUATION.has(t.value))) j++;
      else break;
    }
    i = j;
  }
  return specifiers;
}

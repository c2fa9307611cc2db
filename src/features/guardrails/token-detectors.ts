/**
 * The built-in detectors over one string: secrets (well-known token formats, private key
 * blocks, `name = value` where the name is one the audit trail redacts) and personal data
 * (emails, phone numbers, card numbers that pass the Luhn check, IBANs that pass the
 * mod-97 check, US SSNs, UK National Insurance numbers, French NIRs with a valid key).
 * Each returns the spans it found with a kind naming what it is.
 *
 * Linear in the text: every expression starts only where the character before cannot
 * continue its run (a negative lookbehind of the run's own class), so each run of the
 * text is the start of at most one attempt; every repetition is bounded, and no two
 * repetitions can split the same characters two ways (separators are mandatory where
 * groups repeat). A private key block's end is searched once for the whole text.
 */
import { secretKeyMatcher } from "../audit/secret-keys";

/** One thing a detector found in a string: the span [start, end) and what it is. */
/** A stretch of a string a detector found (`replacement`: a webhook's own text for it, instead of the marker). */
export type Finding = {
  readonly start: number;
  readonly end: number;
  readonly kind: string;
  readonly replacement?: string;
};

/** A format: its expression, a check of each match, and literals one of which every match holds (a text with none is not searched). */
type Format = {
  readonly kind: string;
  readonly pattern: RegExp;
  readonly valid?: (match: string) => boolean;
  readonly needs?: readonly string[];
};

const SECRET_FORMATS: readonly Format[] = [
  {
    kind: "aws-access-key",
    pattern: /(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Z0-9])/g,
    needs: ["AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"],
  },
  {
    kind: "github-token",
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g,
    needs: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
  },
  {
    kind: "slack-token",
    pattern: /(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,250}(?![A-Za-z0-9-])/g,
    needs: ["xox"],
  },
  {
    kind: "slack-webhook",
    pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9_/-]{20,200}/g,
    needs: ["hooks.slack.com"],
  },
  {
    kind: "jwt",
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,4096}\.[A-Za-z0-9_-]{0,4096}/g,
    needs: [".eyJ"],
  },
];

const PRIVATE_KEY_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g;
const PRIVATE_KEY_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g;
/** `name: value`, `name=value`, `"name": "value"`: the value is a secret when the name is one. */
const ASSIGNMENT = /(?<![\w.-])(["']?)([A-Za-z][\w.-]{0,63})\1[ \t]{0,8}[:=][ \t]{0,8}(["']?)([^\s"',;&<>]{4,512})/dg;

/** The Luhn check of a card number's digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * The ISO 13616 check of an IBAN (spaces ignored): letters read as 10–35, country and check
 * digits moved to the end, the number mod 97 is 1.
 */
export function ibanValid(iban: string): boolean {
  const compact = iban.replace(/ /g, "");
  if (compact.length < 15 || compact.length > 34) return false;
  const moved = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (const c of moved) {
    const code = c.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    rest = value >= 10 ? (rest * 100 + value) % 97 : (rest * 10 + value) % 97;
  }
  return rest === 1;
}

const digitsOf = (text: string) => text.replace(/\D/g, "");

/** A US Social Security number as the SSA issues them: no area 000, 666 or 900-999, no group 00, no serial 0000. */
function ssnValid(match: string): boolean {
  const [area, group, serial] = match.split("-");
  return area !== "000" && area !== "666" && area![0] !== "9" && group !== "00" && serial !== "0000";
}

/** A UK National Insurance number's prefix: not one HMRC never issues (BG, GB, NK, KN, NT, TN, ZZ). */
function ninoValid(match: string): boolean {
  return !["BG", "GB", "NK", "KN", "NT", "TN", "ZZ"].includes(match.slice(0, 2));
}

/**
 * A French NIR (social security number: 13 digits and a 2-digit key): the key is 97 minus
 * the number mod 97 (Corsica's 2A, 2B read as 19, 18).
 */
export function nirValid(match: string): boolean {
  const compact = match.replace(/ /g, "");
  const body = compact
    .slice(0, 13)
    .replace(/^(\d{5})2A/, "$119")
    .replace(/^(\d{5})2B/, "$118");
  if (!/^\d{13}$/.test(body)) return false;
  let rest = 0;
  for (const c of body) rest = (rest * 10 + c.charCodeAt(0) - 48) % 97;
  return 97 - rest === Number(compact.slice(13));
}

const PERSONAL_FORMATS: readonly Format[] = [
  {
    kind: "email",
    pattern: /(?<![\w.+-])[A-Za-z0-9][\w.+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.){1,8}[A-Za-z]{2,24}(?![\w-])/g,
    needs: ["@"],
  },
  {
    kind: "phone",
    pattern: new RegExp(
      String.raw`(?<![\w+])(?:\+\d{1,3}(?:[ .-]?\(\d{1,4}\)|[ .-]\d{1,4}){2,6}|\+\d{8,15}` +
        String.raw`|\(\d{3}\) ?\d{3}[ .-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?![\w-])`,
      "g",
    ),
    valid: (match) => {
      const count = digitsOf(match).length;
      return count >= 8 && count <= 15;
    },
  },
  {
    kind: "card-number",
    pattern: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])/g,
    valid: (match) => luhnValid(digitsOf(match)),
  },
  {
    kind: "iban",
    pattern:
      /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)(?![A-Za-z0-9])/g,
    valid: ibanValid,
  },
  { kind: "us-ssn", pattern: /(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])/g, valid: ssnValid, needs: ["-"] },
  {
    kind: "uk-nino",
    pattern: /(?<![A-Za-z0-9])[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g,
    valid: ninoValid,
  },
  {
    kind: "fr-nir",
    pattern: /(?<![\d])[12] ?\d{2} ?(?:0[1-9]|1[0-2]) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\d])/g,
    valid: nirValid,
  },
];

/** Adds each valid match of `format` in `text` to `out` (the expressions are shared: each search runs from 0). */
function findFormat(text: string, format: Format, out: Finding[]): void {
  if (format.needs && !format.needs.some((literal) => text.includes(literal))) return;
  const pattern = format.pattern;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (format.valid && !format.valid(match[0])) continue;
    out.push({ start: match.index, end: match.index + match[0].length, kind: format.kind });
  }
}

/** Private key blocks: from each BEGIN line to the END line after it (or to the end of the text when none follows). */
function findPrivateKeys(text: string, out: Finding[]): void {
  if (!text.includes("PRIVATE KEY")) return;
  const [begin, end] = [PRIVATE_KEY_BEGIN, PRIVATE_KEY_END];
  begin.lastIndex = 0;
  for (let match = begin.exec(text); match !== null; match = begin.exec(text)) {
    end.lastIndex = begin.lastIndex;
    const closing = end.exec(text);
    const stop = closing ? end.lastIndex : text.length;
    out.push({ start: match.index, end: stop, kind: "private-key" });
    // Without an END line after this BEGIN, none follows a later one either: one search of the rest, not one per BEGIN.
    if (!closing) return;
    begin.lastIndex = stop;
  }
}

/** Values assigned to a name the audit trail treats as secret (`password=…`, `"api_key": "…"`). */
function findAssignments(text: string, isSecretKey: (key: string) => boolean, out: Finding[]): void {
  const pattern = ASSIGNMENT;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (!isSecretKey(match[2]!)) continue;
    const [start, end] = match.indices![4]!;
    out.push({ start, end, kind: "secret-value" });
  }
}

/**
 * Secrets in `text`: token formats, private key blocks, values of secret-named fields
 * (`secretKeys`: the audit trail's names, AUDIT.redactKeys).
 *
 * @example
 * findSecrets("key AKIAIOSFODNN7EXAMPLE", ["password"]) // [{ start: 4, end: 24, kind: "aws-access-key" }]
 */
export function findSecrets(text: string, secretKeys: readonly string[]): Finding[] {
  const out: Finding[] = [];
  for (const format of SECRET_FORMATS) findFormat(text, format, out);
  findPrivateKeys(text, out);
  findAssignments(text, secretKeyMatcher(secretKeys), out);
  return out;
}

/**
 * Personal data in `text`: emails, phone numbers (international `+` numbers, and North
 * American ones written with separators), card numbers passing Luhn, IBANs passing mod 97,
 * and three national identifiers: US SSNs (dashed), UK National Insurance numbers, French NIRs
 * (with their key).
 */
export function findPersonalData(text: string): Finding[] {
  const out: Finding[] = [];
  for (const format of PERSONAL_FORMATS) findFormat(text, format, out);
  return out;
}

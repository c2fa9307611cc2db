/**
 * The skeleton of a text: what it reads as, whatever characters spell it. Instructions in
 * disguise are written in full-width forms (`＜ＩＭＰＯＲＴＡＮＴ＞`), with Cyrillic or
 * Greek look-alikes ("ignоre" with a Cyrillic o), with accents or invisible characters
 * inside words; the findings rules match their English phrases on the skeleton as well.
 *
 * skeleton = compatibility decomposition (NFKD: full-width, ligatures, mathematical
 * letters become their plain letters), combining marks and invisible characters dropped,
 * look-alikes of Latin letters and of the punctuation the rules read mapped to them,
 * lower case. One pass per step: linear in the text. Not Unicode's whole confusables
 * table (UTS #39): the letters of Cyrillic, Greek and Armenian that pass for Latin ones.
 */
import { withoutInvisible } from "../../core/invisible-characters";

/** Look-alikes, each a code point → what it passes for (upper case kept: Greek Η is H, η is n). */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  // Cyrillic
  А: "A",
  В: "B",
  Е: "E",
  К: "K",
  М: "M",
  Н: "H",
  О: "O",
  Р: "P",
  С: "C",
  Т: "T",
  Х: "X",
  У: "Y",
  Ѕ: "S",
  І: "I",
  Ј: "J",
  Ԛ: "Q",
  Ԝ: "W",
  Һ: "H",
  Ӏ: "I",
  а: "a",
  в: "b",
  е: "e",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  ѕ: "s",
  і: "i",
  ј: "j",
  ԁ: "d",
  һ: "h",
  ӏ: "l",
  ԛ: "q",
  ԝ: "w",
  ь: "b",
  ѡ: "w",
  ү: "y",
  ғ: "f",
  // Greek
  Α: "A",
  Β: "B",
  Ε: "E",
  Ζ: "Z",
  Η: "H",
  Ι: "I",
  Κ: "K",
  Μ: "M",
  Ν: "N",
  Ο: "O",
  Ρ: "P",
  Τ: "T",
  Υ: "Y",
  Χ: "X",
  α: "a",
  β: "b",
  γ: "y",
  ε: "e",
  η: "n",
  ι: "i",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  σ: "o",
  τ: "t",
  υ: "u",
  χ: "x",
  ω: "w",
  ϲ: "c",
  ϳ: "j",
  ϵ: "e",
  // Armenian
  օ: "o",
  ս: "u",
  ց: "g",
  հ: "h",
  ո: "n",
  Ս: "U",
  Օ: "O",
  // Latin letters that pass for others
  ı: "i",
  ȷ: "j",
  ɑ: "a",
  ɡ: "g",
  ɩ: "i",
  ʟ: "l",
  // Punctuation the rules read (tags, paths); NFKD already maps the full-width and small forms
  "\u2039": "<",
  "\u203A": ">",
  "\u27E8": "<",
  "\u27E9": ">",
  "\u3008": "<",
  "\u3009": ">",
  "\u02C2": "<",
  "\u02C3": ">",
  "\u1438": "<",
  "\u1433": ">",
  "\u2215": "/",
  "\u2044": "/",
  "\u29F8": "/",
  "\u223C": "~",
  "\u2053": "~",
};
const LOOK_ALIKE = new RegExp(`[${Object.keys(LOOK_ALIKES).join("")}]`, "gu");
/** Combining marks (accents, and the joiners that carry none): "ignöre" reads as "ignore". */
const COMBINING_MARKS = /\p{M}+/gu;

/**
 * The skeleton of `text` (see the header). Its length may differ from the text's.
 *
 * @example
 * skeleton("＜ＩＭＰＯＲＴＡＮＴ＞ ignоre"); // "<important> ignore" (the o was Cyrillic)
 */
export function skeleton(text: string): string {
  const plain = withoutInvisible(text.normalize("NFKD").replace(COMBINING_MARKS, ""));
  return plain.replace(LOOK_ALIKE, (char) => LOOK_ALIKES[char] ?? char).toLowerCase();
}

// What the sandbox walk reads in a caller's words (DESIGN.md "Running"):
// keywords (case-insensitive, whole words or phrases) and a value of each
// variable type. Deterministic and small on purpose: the sandbox stands in
// for a model, so tests can say exactly what a turn does.
import { requestedDate } from '../../providers/language-model/sandbox.js';
import { MAX_STRING_LENGTH, type VariableDeclaration, type VariableValue, asPhone, toVariableValue } from './values.js';

/** Lower case, typographic apostrophes as ASCII ones (recognisers write both). */
const normalise = (text: string) => text.toLowerCase().replace(/[\u2018\u2019]/g, "'");

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A word or phrase as a whole: not inside a longer word or number; spaces in it match any run of spaces. */
function phrasePattern(phrase: string): RegExp {
  const body = normalise(phrase).trim().split(/\s+/).map(escapeRegExp).join('\\s+');
  return new RegExp(`(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`, 'u');
}

/** Where `phrase` first occurs in `text` as a whole word or phrase, or -1. */
function phraseIndex(phrase: string, text: string): number {
  if (!phrase.trim()) return -1;
  return phrasePattern(phrase).exec(normalise(text))?.index ?? -1;
}

/** True when one of `keywords` occurs in the caller's words (case-insensitive, whole words or phrases). */
export function keywordsOccur(keywords: readonly string[], utterance: string): boolean {
  return keywords.some((keyword) => phraseIndex(keyword, utterance) >= 0);
}

const SMALL = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS: Record<string, number> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};

/** "twenty five", "twenty-five", "seven", "three hundred and two" at tokens[i]: its value and the tokens it took, or null. */
function wordsNumber(tokens: string[], i: number): { value: number; length: number } | null {
  const below100 = (at: number): { value: number; length: number } | null => {
    const word = tokens[at];
    if (word === undefined) return null;
    if (SMALL.includes(word)) return { value: SMALL.indexOf(word), length: 1 };
    const tens = TENS[word];
    if (tens === undefined) return null;
    const unit = SMALL.indexOf(tokens[at + 1] ?? '');
    return unit >= 1 && unit <= 9 ? { value: tens + unit, length: 2 } : { value: tens, length: 1 };
  };
  const first = below100(i);
  if (!first || tokens[i + first.length] !== 'hundred') return first;
  let length = first.length + 1;
  if (tokens[i + length] === 'and') length += 1;
  const rest = below100(i + length);
  return rest
    ? { value: first.value * 100 + rest.value, length: length + rest.length }
    : { value: first.value * 100, length: tokens[i + length - 1] === 'and' ? length - 1 : length };
}

/** The first number in the words: written in digits ("42", "1,250.5", "-3"), else in words up to the hundreds. */
export function numberIn(utterance: string): number | null {
  const digits =
    /(?<![\p{L}\p{N}.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\p{N}])|(?<![\p{L}\p{N}.])-?\d+(?:\.\d+)?(?![\p{N}])/u.exec(
      utterance,
    )?.[0];
  if (digits) return Number(digits.replace(/,/g, ''));
  const tokens = normalise(utterance)
    .split(/[^a-z]+/)
    .filter(Boolean);
  for (let i = 0; i < tokens.length; i++) {
    const found = wordsNumber(tokens, i);
    if (found) return found.value;
  }
  return null;
}

const DIGIT_WORDS: Record<string, string> = {
  zero: '0',
  oh: '0',
  o: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
};

/**
 * A phone number in the words, as E.164: one written with its `+`
 * ("+44 20 7946 0958"), or the digits of the turn, in figures or spoken one
 * by one ("four one five, five five five, oh one two three"; "double five"),
 * with a spoken "plus" before them; 10 digits are a North American number.
 */
export function phoneIn(utterance: string): string | null {
  const written = /\+\d[\d\s().-]{5,22}\d/.exec(utterance)?.[0];
  if (written) {
    const phone = asPhone(written);
    if (phone) return phone;
  }
  const tokens = normalise(utterance)
    .split(/[^a-z0-9+]+/)
    .filter(Boolean);
  let digits = '';
  let plus = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === 'plus' && digits === '') plus = true;
    else if (/^\+?\d+$/.test(token)) {
      if (token.startsWith('+') && digits === '') plus = true;
      digits += token.replace('+', '');
    } else if (DIGIT_WORDS[token]) digits += DIGIT_WORDS[token];
    else if ((token === 'double' || token === 'triple') && DIGIT_WORDS[tokens[i + 1] ?? '']) {
      digits += DIGIT_WORDS[tokens[i + 1]!]!.repeat(token === 'double' ? 2 : 3);
      i += 1;
    }
  }
  return asPhone(plus ? `+${digits}` : digits);
}

const EMAIL = /[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)+/;

/**
 * An email address in the words, written or spoken: "ada dot lovelace at
 * example dot com" ("underscore", "dash" too). Spoken, the "at" is the one
 * before a dotted domain that no other "at" follows ("write to me at ...").
 */
export function emailIn(utterance: string): string | null {
  const text = normalise(utterance);
  const written = EMAIL.exec(text)?.[0];
  if (written) return written.replace(/\.+$/, '');
  const spelled = text
    .replace(/\s+dot\s+/g, '.')
    .replace(/\s*\bunderscore\b\s*/g, '_')
    .replace(/\s+(?:dash|hyphen)\s+/g, '-');
  const spoken =
    /([a-z0-9][a-z0-9._%+-]*)\s+at\s+([a-z0-9-]+(?:\.[a-z0-9-]+)+)(?![a-z0-9-]|\.[a-z0-9])(?!\s+at\s)/.exec(spelled);
  return spoken ? `${spoken[1]}@${spoken[2]!.replace(/\.+$/, '')}` : null;
}

const YES =
  /(?<![a-z'])(yes|yeah|yep|yup|sure|correct|right|absolutely|definitely|certainly|of course|ok|okay|affirmative)(?![a-z'])/;
const NO = /(?<![a-z'])(no|nope|nah|not|don't|do not|never|negative|incorrect|wrong)(?![a-z'])/;

/** A yes or a no in the words; when both occur, the first said. */
export function booleanIn(utterance: string): boolean | null {
  const text = normalise(utterance);
  const yes = YES.exec(text)?.index ?? -1;
  const no = NO.exec(text)?.index ?? -1;
  if (yes < 0 && no < 0) return null;
  if (yes < 0) return false;
  if (no < 0) return true;
  return yes < no;
}

/** The enum value the words name (`_` and `-` in a value heard as spaces); when several, the first said, the longest of those. */
export function enumIn(values: readonly string[], utterance: string): string | null {
  let best: { value: string; at: number } | null = null;
  for (const value of values) {
    const at = [value, value.replace(/[_-]+/g, ' ')]
      .map((v) => phraseIndex(v, utterance))
      .filter((i) => i >= 0)
      .sort((a, b) => a - b)[0];
    if (at === undefined) continue;
    if (!best || at < best.at || (at === best.at && value.length > best.value.length)) best = { value, at };
  }
  return best?.value ?? null;
}

/**
 * A value of `variable` in the caller's words, or null: a date by the
 * sandbox engine's day words (relative to `now`), a phone, an email, a
 * number, a yes or no, an enum value named; a string is the whole answer.
 */
export function extractValue(variable: VariableDeclaration, utterance: string, now: number): VariableValue | null {
  const raw =
    variable.type === 'date'
      ? requestedDate(utterance, now)
      : variable.type === 'phone'
        ? phoneIn(utterance)
        : variable.type === 'email'
          ? emailIn(utterance)
          : variable.type === 'number'
            ? numberIn(utterance)
            : variable.type === 'boolean'
              ? booleanIn(utterance)
              : variable.type === 'enum'
                ? enumIn(variable.values ?? [], utterance)
                : utterance.trim().slice(0, MAX_STRING_LENGTH);
  if (raw === null || raw === '') return null;
  const checked = toVariableValue(variable, raw);
  return 'value' in checked ? checked.value : null;
}

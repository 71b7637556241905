// What pocketsphinx searches with, built at run time from the phrases a call
// expects (DESIGN.md "Offline speech on these machines"): a small trigram
// language model (ARPA text, which pocketsphinx reads as it is) over the
// phrases' words plus a loop of common "garbage" words, and the matcher that
// turns a decoded word string back into one expected phrase with a confidence.
//
// Why not a JSGF grammar of the lines: a grammar with no way out snaps any
// miss onto its shortest line, and a phone-loop way out wins almost always on
// phone audio (measured: docs/decisions/offline-speech.md). With an n-gram
// model the decoder may say any sequence of the known words, so speech off
// the script comes out as a jumble that matches no line, and a line said with
// one word lost still matches its line closely.

/** Words the decoder may use for speech that is none of the phrases: common English, so a miss has somewhere to go. */
export const GARBAGE_WORDS = (
  'the of and a to in it that was he for on are as with his they at be this have from or one had by but not what all were ' +
  'we when there can an your which their said if do will each about how up out them then she many some so these would other ' +
  'into has more her two like him see time could make than first been its who now people my made over did down only way find ' +
  'use may water long little very after words called just where most know get through back much go good new write our me man ' +
  'too any day same right look think also around another came come work three word must because does part even place well ' +
  'such here take why things help put years different away again off went old number great tell men say small every found ' +
  'still between name should home big give air line set own under read last never us left end along while might next sound ' +
  'below saw something thought both few those always looked show large often together asked house world going want school ' +
  'important until form food keep children feet land side without boy once animals life enough took sometimes four head above ' +
  'kind began almost live page got earth need far hand high year mother light parts country father let night following picture ' +
  'being study second eyes soon times story boys since white days paper hard near sentence better best across during today ' +
  'others however sure means knew try told young miles sun ways thing whole hear example heard several change answer room sea ' +
  'against top turned learn point city play toward five using himself usually money red purple green blue dog cat car door ' +
  // The commonest word of all, and the sounds nearest the keywords: without "i" a caller's "I would like ..." had only
  // "bye" to go to (flite: "bye would like to bye bye meeting"), and the engine heard a goodbye.
  'i is you me am hi by buy please like'
).split(' ');

/** Lower-case words of a phrase as the dictionary spells them: punctuation dropped, apostrophes kept. */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[\u2019\u2018]/g, "'")
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(' ')
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter((w) => w.length > 0);
}

const DISCOUNT = 0.5;
/** Share of unigram mass the garbage words get together: enough to absorb a miss, little enough that a line said clearly stays the line. */
export const SCRIPT_GARBAGE_MASS = 0.05;
/** Keyword spotting gives the garbage more: short keywords (no, bye, yes) are otherwise heard in any speech (measured 0.05 / 0.3 / 0.6). */
export const KEYWORD_GARBAGE_MASS = 0.3;

/**
 * A trigram ARPA model: the phrases (each between <s> and </s>) with absolute
 * discounting and proper back-off weights, plus the garbage words as unigrams.
 * Only words `known` accepts (those in the pronunciation dictionary) are used.
 */
export function buildArpa(
  phrases: string[][],
  garbage: string[],
  known: (word: string) => boolean = () => true,
  garbageMass = SCRIPT_GARBAGE_MASS,
): string {
  const sentences = phrases.map((p) => p.filter(known)).filter((p) => p.length > 0);
  const counts = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
  for (const words of sentences) {
    const seq = ['<s>', ...words, '</s>'];
    for (let i = 0; i < seq.length; i++) {
      for (let n = 1; n <= 3 && i - n + 1 >= 0; n++) {
        const gram = seq.slice(i - n + 1, i + 1);
        if (gram.length === 1 && gram[0] === '<s>') continue;
        const key = gram.join(' ');
        counts[n - 1]!.set(key, (counts[n - 1]!.get(key) ?? 0) + 1);
      }
    }
  }
  const scriptWords = new Set([...counts[0]!.keys()]);
  const garbageWords = [...new Set(garbage.filter((w) => known(w) && !scriptWords.has(w)))];

  // Unigrams: the script's words share (1 - garbageMass) by count, the garbage words the rest evenly.
  const uni = new Map<string, number>();
  const total = [...counts[0]!.values()].reduce((a, b) => a + b, 0);
  const scriptMass = garbageWords.length > 0 ? 1 - garbageMass : 1;
  for (const [w, c] of counts[0]!) uni.set(w, (scriptMass * c) / total);
  for (const w of garbageWords) uni.set(w, garbageMass / garbageWords.length);
  uni.set('<s>', 0);

  // Higher orders: p(w|h) = (c(h w) - D) / c(h) for seen (h, w); back-off weight from the mass left over.
  const historyCount = (h: string, order: number): number =>
    order === 1 ? (counts[0]!.get(h) ?? 0) + (h === '<s>' ? sentences.length : 0) : (counts[order - 1]!.get(h) ?? 0);
  const probs: Array<Map<string, number>> = [uni, new Map(), new Map()];
  const backoff: Array<Map<string, number>> = [new Map(), new Map(), new Map()];
  const lowerProb = (words: string[]): number => {
    // Probability of the last word given the others, through back-off.
    const key = words.join(' ');
    const explicit = probs[words.length - 1]!.get(key);
    if (explicit !== undefined) return explicit;
    const history = words.slice(0, -1).join(' ');
    return (backoff[words.length - 2]!.get(history) ?? 1) * lowerProb(words.slice(1));
  };
  for (let n = 2; n <= 3; n++) {
    const byHistory = new Map<string, string[]>();
    for (const key of counts[n - 1]!.keys()) {
      const words = key.split(' ');
      const h = words.slice(0, -1).join(' ');
      byHistory.set(h, [...(byHistory.get(h) ?? []), words[words.length - 1]!]);
    }
    for (const [h, followers] of byHistory) {
      const ch = historyCount(h, n - 1);
      let seenLower = 0;
      for (const w of followers) {
        probs[n - 1]!.set(`${h} ${w}`, (counts[n - 1]!.get(`${h} ${w}`)! - DISCOUNT) / ch);
        seenLower += lowerProb([...h.split(' ').slice(1), w]);
      }
      const left = (DISCOUNT * followers.length) / ch;
      backoff[n - 2]!.set(h, left / Math.max(1e-9, 1 - seenLower));
    }
  }

  const log10 = (p: number): string => (p <= 0 ? '-99' : Math.log10(p).toFixed(4));
  const out = ['\\data\\', `ngram 1=${uni.size}`, `ngram 2=${probs[1]!.size}`, `ngram 3=${probs[2]!.size}`, ''];
  for (let n = 1; n <= 3; n++) {
    out.push(`\\${n}-grams:`);
    for (const [key, p] of probs[n - 1]!) {
      const bo = n < 3 ? backoff[n - 1]!.get(key) : undefined;
      out.push(bo !== undefined ? `${log10(p)} ${key} ${log10(bo)}` : `${log10(p)} ${key}`);
    }
    out.push('');
  }
  out.push('\\end\\', '');
  return out.join('\n');
}

/** Word-level edit distance (substitution, insertion, deletion each 1). */
function editDistance(a: string[], b: string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

export interface PhraseMatch {
  /** Index into the phrases; -1 when none matches well enough. */
  index: number;
  /** 1 − word edit distance ÷ the longer of the two: 1 is word for word. */
  confidence: number;
}

/**
 * The expected phrase the decoded words are closest to. Garbage words count
 * as errors like any other word, so speech off the script (decoded as a jumble
 * of script and garbage words) stays under `threshold` and matches nothing.
 */
export function matchPhrase(decoded: string[], phrases: string[][], threshold: number): PhraseMatch {
  if (decoded.length === 0) return { index: -1, confidence: 0 };
  let best: PhraseMatch = { index: -1, confidence: 0 };
  phrases.forEach((words, index) => {
    if (words.length === 0) return;
    const confidence = 1 - editDistance(decoded, words) / Math.max(decoded.length, words.length);
    if (confidence > best.confidence) best = { index, confidence };
  });
  return best.confidence >= threshold ? best : { index: -1, confidence: best.confidence };
}

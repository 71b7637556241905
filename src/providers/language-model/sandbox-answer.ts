// How the sandbox dialogue engine answers a question from a knowledge
// passage (docs/decisions/voice-agent.md "The sandbox dialogue engine"): with
// the sentence that answers it, never a heading, a title or the question read
// back from an FAQ. Deterministic word heuristics, no language model:
//   - Markdown headings, heading-like lines (short, no verb, alone on their
//     line, or run into the text: "Opening hours. We are open …"), the
//     document's title and questions (an FAQ's "Q: …", any sentence ending
//     "?") are not answers; they are the topic of what follows them, so "Where
//     can I park?" finds the answer under "Parking" or after "Q: Can I park?";
//   - a sentence that says something beyond the question's words wins over
//     one that only repeats them, then the one sharing most (four-letter
//     stemmed) words with the question, itself and its topic, then the
//     earliest;
//   - a short reply ("Yes.", "We do.") and a line ending in a colon ("Our
//     hours are:") are said with what follows them in their paragraph.
const STOP_WORDS = new Set([
  'the',
  'and',
  'you',
  'your',
  'are',
  'can',
  'could',
  'tell',
  'please',
  'what',
  'when',
  'where',
  'how',
  'why',
  'who',
  'which',
  'does',
  'for',
  'with',
  'about',
  'this',
  'that',
  'have',
  'has',
  'there',
  'is',
  'me',
  'my',
  'our',
  'its',
  'it',
  'do',
  'of',
  'to',
  'in',
  'on',
  'at',
  'a',
  'an',
  'be',
  'would',
  'like',
  'know',
  'want',
  'i',
  'we',
  'us',
  'was',
  'were',
  'will',
  'from',
  'any',
  'all',
  'also',
  'just',
  'very',
  'than',
  'then',
  'them',
  'they',
  'their',
  'yes',
  'not',
]);

/**
 * Words that make a line a sentence rather than a heading: verbs and
 * auxiliaries a business page uses, and subject pronouns ("We …").
 */
const SENTENCE_WORDS = new Set([
  'is',
  'are',
  'was',
  'were',
  'be',
  'been',
  'am',
  'have',
  'has',
  'had',
  'do',
  'does',
  'did',
  'can',
  'could',
  'will',
  'would',
  'shall',
  'should',
  'may',
  'might',
  'must',
  'we',
  'you',
  'they',
  'it',
  'i',
  'he',
  'she',
  'there',
  'please',
  'open',
  'opens',
  'close',
  'closes',
  'closed',
  'offer',
  'offers',
  'accept',
  'accepts',
  'take',
  'takes',
  'cost',
  'costs',
  'need',
  'needs',
  'get',
  'gets',
  'call',
  'visit',
  'book',
  'bring',
  'park',
  'pay',
  'include',
  'includes',
  'provide',
  'provides',
  'serve',
  'serves',
  'start',
  'starts',
  'run',
  'runs',
  'help',
  'helps',
]);

/** Words a full stop follows without ending the sentence ("9 a.m. to 5", "Dr. Lee"); "No. 5" is handled apart. */
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'st',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'approx',
  'a.m',
  'p.m',
  'inc',
  'ltd',
  'mon',
  'tue',
  'wed',
  'thu',
  'fri',
  'sat',
  'sun',
]);

/** Little words a Title Case heading leaves in lower case. */
const TITLE_SMALL_WORDS = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'of',
  'to',
  'in',
  'on',
  'for',
  'at',
  'by',
  'with',
  '&',
  '-',
  '\u2014',
  '\u2013',
]);

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
}

/** Crude stem: the first four letters ("opening" and "open", "parking" and "park" meet). */
function stem(word: string) {
  return word.slice(0, 4);
}

/** Words that carry meaning: three letters or more and not a stop word, or any number ("9 to 5"). */
function contentStems(text: string): Set<string> {
  return new Set(
    words(text)
      .filter((w) => /\d/.test(w) || (w.length >= 3 && !STOP_WORDS.has(w)))
      .map(stem),
  );
}

interface Sentence {
  text: string;
  /** Sentences of one paragraph (or one FAQ answer) share it: only they are joined. */
  block: number;
  /** The heading or question it comes under ("" when none). */
  topic: string;
  /** A heading run into the text ("Opening hours. We are open …" on one line): not an answer. */
  headingLike: boolean;
}

/** An answer that needs what follows it: "Yes.", "We do.", "Of course!". */
const SHORT_REPLY =
  /^(?:(?:yes|no|yep|nope|sure|of course|absolutely|certainly|definitely|not yet)\b[^.!]{0,12}|(?:(?:yes|no),? )?(?:we|it|you|they|i) (?:do|don't|can|can't|are|aren't|is|isn't|does|doesn't|will|won't))[.!]$/i;

/** Markdown a voice does not say: list markers, quotes, emphasis, code, links. */
function plainLine(line: string): { text: string; listItem: boolean } {
  const listItem = /^\s*([-*+\u2022]|\d+[.)])\s+/.test(line);
  const text = line
    .replace(/^\s*>\s?/, '')
    .replace(/^\s*([-*+\u2022]|\d+[.)])\s+/, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__|`)/g, '')
    .replace(/(^|\s)[*_](\S[^*_]*\S|\S)[*_](?=\s|[.,;:!?]|$)/g, '$1$2')
    .trim();
  return { text, listItem };
}

function isTitleCase(line: string): boolean {
  const tokens = line
    .replace(/[.:]$/, '')
    .split(/\s+/)
    .filter((t) => /[a-z]/i.test(t));
  return tokens.length >= 2 && tokens.every((t) => TITLE_SMALL_WORDS.has(t.toLowerCase()) || /^[A-Z0-9]/.test(t));
}

/** A line that names a subject rather than saying something about it ("Opening hours.", "Parking", "Frequently Asked Questions"). */
function isHeadingLike(line: string, listItem: boolean): boolean {
  if (listItem || /\d/.test(line) || /[!?,;]$/.test(line) || SHORT_REPLY.test(line)) return false;
  const lineWords = words(line);
  if (!lineWords.length) return true;
  if (lineWords.length <= 8 && !/[.]$/.test(line) && isTitleCase(line)) return true;
  if (lineWords.some((w) => SENTENCE_WORDS.has(w) || /'(s|re|ll|ve|d)$/.test(w))) return false;
  // With a full stop a heading is a few words ("Opening hours."); without one it may be longer.
  return /[.]$/.test(line) ? lineWords.length <= 3 : lineWords.length <= 8;
}

/** Splits at sentence ends followed by a capital, a digit or a quote, not after "a.m." or "Dr.". */
function sentencesOf(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const end of text.matchAll(/[.!?]+(?=\s+["'\u201c(]?[A-Z0-9])/g)) {
    const before =
      text
        .slice(start, end.index)
        .match(/([A-Za-z.]+)$/)?.[1]
        ?.toLowerCase() ?? '';
    if (end[0] === '.' && ABBREVIATIONS.has(before.replace(/\.$/, ''))) continue;
    if (end[0] === '.' && before === 'no' && /^\s+\d/.test(text.slice(end.index + 1))) continue;
    const stop = end.index + end[0].length;
    out.push(text.slice(start, stop).trim());
    start = stop;
  }
  out.push(text.slice(start).trim());
  return out.filter(Boolean);
}

/** "Q: …" / "Question: …" and "A: …" / "Answer: …" at a line's start or after a sentence: where an FAQ's parts begin. */
const FAQ_MARKER = /(?:^|(?<=[.!?]\s*))\s*(Q|Question|A|Answer)\s*:\s*/gi;

function faqParts(line: string): Array<{ text: string; question: boolean }> {
  const markers = [...line.matchAll(FAQ_MARKER)];
  if (!markers.length) return [{ text: line, question: false }];
  const parts: Array<{ text: string; question: boolean }> = [];
  if (markers[0]!.index > 0) parts.push({ text: line.slice(0, markers[0]!.index), question: false });
  markers.forEach((m, i) => {
    const end = markers[i + 1]?.index ?? line.length;
    parts.push({ text: line.slice(m.index + m[0].length, end), question: /^q/i.test(m[1]!) });
  });
  return parts;
}

/** A line ending so cannot end a sentence: the next line goes on with it (hard-wrapped text). */
const RUNS_ON = /(?:^|\s)(?:from|to|the|a|an|and|or|of|at|on|in|with|for|by|our|your|is|are)$/i;

interface Line {
  text: string;
  block: number;
  topic: string;
  faq: boolean;
}

/** The lines of a passage that may answer, each with its paragraph and topic; `titles` are lines that name the document. */
function answerLines(text: string, titles: string[]): { lines: Line[]; headings: string[] } {
  const key = (t: string) =>
    t
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .trim();
  const titleKeys = new Set(titles.map((t) => key(t.replace(/\.[a-z0-9]{1,5}$/i, ''))).filter(Boolean));
  const lines: Line[] = [];
  // Heading-like lines: an answer only when there is nothing else ("Free parking behind the store" alone).
  const headings: string[] = [];
  let block = 0;
  let topic = '';
  for (const rawLine of text.replace(/\r\n?/g, '\n').split('\n')) {
    // A blank line ends a paragraph; a Markdown heading, a heading-like line or the title also, and is no answer.
    if (!rawLine.trim()) {
      block++;
      continue;
    }
    const heading = /^\s*#{1,6}\s+(.*)$/.exec(rawLine)?.[1];
    if (heading !== undefined) {
      topic = plainLine(heading).text;
      block++;
      continue;
    }
    const { text: line, listItem } = plainLine(rawLine);
    if (!line || titleKeys.has(key(line))) {
      block++;
      continue;
    }
    const faq = faqParts(line).length > 1 || /^(Q|Question|A|Answer)\s*:/i.test(line);
    const previous = lines[lines.length - 1];
    if (
      previous &&
      previous.block === block &&
      !listItem &&
      !faq &&
      !previous.faq &&
      (RUNS_ON.test(previous.text) || (/^[a-z]/.test(line) && !/[.!?:]$/.test(previous.text)))
    ) {
      previous.text = `${previous.text} ${line}`;
      continue;
    }
    if (!faq && isHeadingLike(line, listItem)) {
      headings.push(line);
      topic = line;
      block++;
      continue;
    }
    lines.push({ text: line, block, topic, faq });
  }
  return { lines, headings };
}

/** The sentences that may answer, in order: an FAQ's questions and any question are left out, as the topic of what follows. */
function candidates(text: string, titles: string[]): { sentences: Sentence[]; headings: string[] } {
  const { lines, headings } = answerLines(text, titles);
  const out: Sentence[] = [];
  // Sentences join only within one paragraph and one FAQ answer.
  let block = 0;
  let paragraph = -1;
  let topic = '';
  let lineTopic = '';
  for (const line of lines) {
    if (line.block !== paragraph) {
      paragraph = line.block;
      block++;
      // A question is the topic of its own paragraph (and of an "A: …" set apart from it), a heading of its section.
      if (!/^(A|Answer)\s*:/i.test(line.text)) topic = line.topic;
    }
    if (line.topic !== lineTopic) topic = lineTopic = line.topic;
    for (const part of faqParts(line.text)) {
      if (part.question) {
        topic = part.text.trim();
        block++;
        continue;
      }
      sentencesOf(part.text).forEach((sentence, i, all) => {
        // A question is never an answer: the FAQ's own, or one asked back at the reader ("Need parking? …").
        if (/\?["')\]]*$/.test(sentence)) {
          topic = sentence;
          return;
        }
        // "Opening hours. We are open …" on one line: its first words are a heading run into the text.
        const headingLike = i === 0 && all.length > 1 && /[.:]$/.test(sentence) && isHeadingLike(sentence, false);
        if (headingLike) topic = sentence;
        out.push({ text: sentence, block, topic, headingLike });
      });
    }
  }
  // An overlapping chunk may begin mid-sentence ("to five on weekdays."): that fragment is no answer.
  if (out.length > 1 && /^[a-z]/.test(text.trimStart()) && /^[a-z]/.test(out[0]!.text)) out.shift();
  return { sentences: out, headings };
}

/** The sentence at `index` with what it needs after it: the next one after a short reply, the list after a colon. */
function withFollowing(all: Sentence[], index: number): { text: string; topic: string } {
  const first = all[index]!;
  const max = /:$/.test(first.text) ? 4 : SHORT_REPLY.test(first.text) ? 1 : 0;
  let text = first.text;
  for (let next = index + 1; next < all.length && next <= index + max; next++) {
    const following = all[next]!;
    if (following.block !== first.block || following.headingLike) break;
    text = `${text} ${following.text}`;
  }
  return { text, topic: first.topic };
}

/**
 * The passage of `text` (a knowledge match) that answers `question`, as it
 * should be said; null when it holds none (only headings or questions).
 * `titles`: the document's title, a line that is not an answer either.
 */
export function answeringPassage(text: string, question: string, titles: string[] = []): string | null {
  const { sentences: all, headings } = candidates(text, titles);
  const questionStems = new Set(words(question).map(stem));
  const wanted = contentStems(question);
  const score = (passage: { text: string; topic: string }) => {
    const said = contentStems(passage.text);
    const about = new Set([...said, ...contentStems(passage.topic)]);
    let shared = 0;
    let beyond = 0;
    for (const s of wanted) if (about.has(s)) shared++;
    for (const s of said) if (!questionStems.has(s)) beyond++;
    return { text: passage.text, shared, beyond };
  };
  let scored = all.flatMap((sentence, index) => (sentence.headingLike ? [] : [score(withFollowing(all, index))]));
  // Only heading-like lines: one that says more than the question may do ("Opening hours." read back will not).
  if (!scored.length) scored = headings.map((line) => score({ text: line, topic: '' })).filter((s) => s.beyond > 0);
  if (!scored.length) return null;
  // What says something beyond the question's words, then what shares most of them, then the earlier.
  let best = scored[0]!;
  for (const s of scored) {
    const better = Number(s.beyond > 0) - Number(best.beyond > 0) || s.shared - best.shared;
    if (better > 0) best = s;
  }
  return best.text;
}

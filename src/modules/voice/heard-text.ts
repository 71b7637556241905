// What the caller heard of a reply. A segment (one sentence) is heard up to
// its last acknowledged mark: all of it when its end mark came back, nothing
// when no mark did, and in between a share of its characters equal to the
// share of its audio played, backed off to the last whole word (speech runs
// at a roughly even rate of characters; marks come every 400 ms, so the cut is
// within about one word of the truth). Nothing after the first segment not
// fully played was heard.

export interface SegmentFacts {
  text: string;
  /** Audio made for the segment, ms. */
  audioMs: number;
  /** Audio known to have played (last acknowledged mark), ms. */
  playedMs: number;
  /** Which model round (text before a tool call is round 0, after it round 1, …) it belongs to. */
  round: number;
}

export interface Heard {
  /** Heard text per round (only rounds with some heard text are present, in order). */
  rounds: Array<{ round: number; text: string }>;
  text: string;
  /** Heard text of each segment, in the order given ('' for one not heard at all). */
  parts: string[];
  /** Something was spoken (or meant to be) that the caller did not hear in full. */
  interrupted: boolean;
  /** What was not heard, from the cut (a whole word) on: the text a resumed reply speaks. */
  unheard: string;
}

/** The characters of `text` heard when `fraction` of its audio played, ending on a whole word. */
export function cutByShare(text: string, fraction: number): string {
  if (fraction >= 1) return text;
  if (fraction <= 0) return '';
  const chars = Math.floor(text.length * fraction);
  if (chars >= text.length) return text;
  // A word is heard only when the cut falls after its end.
  const head = text.slice(0, chars);
  if (/\s/.test(text[chars] ?? ' ')) return head.trimEnd();
  const lastSpace = head.search(/\s\S*$/);
  return lastSpace < 0 ? '' : head.slice(0, lastSpace).trimEnd();
}

/**
 * `pending` is text the reply had but never sent to the sink (cut before its
 * turn): unheard by definition.
 */
export function heardText(segments: SegmentFacts[], pending = ''): Heard {
  const rounds = new Map<number, string[]>();
  const unheard: string[] = [];
  const parts: string[] = [];
  let cut = false;
  for (const segment of segments) {
    if (cut) {
      unheard.push(segment.text);
      parts.push('');
      continue;
    }
    const complete = segment.audioMs > 0 && segment.playedMs >= segment.audioMs;
    const part = complete
      ? segment.text
      : segment.audioMs > 0
        ? cutByShare(segment.text, segment.playedMs / segment.audioMs)
        : '';
    parts.push(part);
    if (part) rounds.set(segment.round, [...(rounds.get(segment.round) ?? []), part]);
    if (!complete) {
      cut = true;
      const rest = segment.text.slice(part.length).trim();
      if (rest) unheard.push(rest);
    }
  }
  if (pending.trim()) {
    unheard.push(pending.trim());
    cut = true;
  }
  const list = [...rounds.entries()].map(([round, texts]) => ({ round, text: texts.join(' ') }));
  return { rounds: list, text: list.map((r) => r.text).join(' '), parts, interrupted: cut, unheard: unheard.join(' ') };
}

// `*` wildcard matching in time linear in the text and the pattern, whatever
// the pattern: no regular expression, no backtracking. A pattern
// `s0*s1*…*sk` matches when the text starts with s0, ends with sk, and holds
// s1…s(k-1) in order, without overlap, between them. Taking the leftmost
// place for each middle segment (greedy) is enough: a later place never
// leaves more room for the segments after it. Each middle segment is found
// with Knuth–Morris–Pratt, whose text position never moves back, so the whole
// match reads each text character a bounded number of times.

/** Counts the matcher's steps, for tests that check the bound instead of timing it. */
export interface StepMeter {
  steps: number;
}

interface Segment {
  text: string;
  /** KMP failure function: the length of the longest proper border of text[0..i]. */
  border: Int32Array;
}

export class WildcardPattern {
  readonly source: string;
  private readonly head: string;
  private readonly tail: string;
  private readonly middle: Segment[];
  private readonly exact: boolean;

  constructor(pattern: string) {
    this.source = pattern;
    const parts = pattern.split('*');
    this.exact = parts.length === 1;
    this.head = parts[0];
    this.tail = parts.length > 1 ? parts[parts.length - 1] : '';
    // Empty middle segments (from `**`) match anywhere: drop them.
    this.middle = parts
      .slice(1, -1)
      .filter((s) => s !== '')
      .map((text) => ({ text, border: borders(text) }));
  }

  matches(text: string, meter?: StepMeter): boolean {
    if (this.exact) {
      if (meter) meter.steps += Math.min(text.length, this.head.length) + 1;
      return text === this.head;
    }
    const { head, tail } = this;
    if (meter) meter.steps += head.length + tail.length + 1;
    if (text.length < head.length + tail.length || !text.startsWith(head) || !text.endsWith(tail)) return false;
    let from = head.length;
    const end = text.length - tail.length;
    for (const segment of this.middle) {
      const at = find(segment, text, from, end, meter);
      if (at < 0) return false;
      from = at + segment.text.length;
    }
    return true;
  }
}

function borders(s: string): Int32Array {
  const border = new Int32Array(s.length);
  let k = 0;
  for (let i = 1; i < s.length; i++) {
    while (k > 0 && s[i] !== s[k]) k = border[k - 1];
    if (s[i] === s[k]) k++;
    border[i] = k;
  }
  return border;
}

/** The first index ≥ from where segment occurs wholly before end, or -1. */
function find({ text: p, border }: Segment, text: string, from: number, end: number, meter?: StepMeter): number {
  let k = 0;
  let steps = 0;
  for (let i = from; i < end; i++) {
    while (k > 0 && text[i] !== p[k]) {
      k = border[k - 1];
      steps++;
    }
    steps++;
    if (text[i] === p[k]) k++;
    if (k === p.length) {
      if (meter) meter.steps += steps;
      return i - p.length + 1;
    }
  }
  if (meter) meter.steps += steps;
  return -1;
}

// Cuts a streamed answer into sentences, so speech can start on the first
// while the model writes the rest. A sentence ends at . ! ? or … followed by
// white space (or the end of the answer), unless the word before is a common
// abbreviation (Dr. Mr. e.g. …) or a single letter.

const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'st',
  'jr',
  'sr',
  'prof',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'no',
  'approx',
  'inc',
  'ltd',
  'mt',
  'ave',
]);

export class SentenceSplitter {
  private buffer = '';

  /** Adds streamed text; returns the sentences it completed. */
  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
    let searchFrom = 0;
    for (;;) {
      const match = /[.!?\u2026]+["')\]]*(\s+)/g;
      match.lastIndex = searchFrom;
      const m = match.exec(this.buffer);
      if (!m) break;
      const end = m.index + m[0].length - m[1]!.length;
      const candidate = this.buffer.slice(0, end).trim();
      const lastWord =
        candidate
          .replace(/[.!?\u2026"')\]]+$/, '')
          .split(/\s+/)
          .pop()
          ?.toLowerCase() ?? '';
      if (m[0].startsWith('.') && (ABBREVIATIONS.has(lastWord) || /^[a-z]$/.test(lastWord))) {
        searchFrom = m.index + m[0].length;
        continue;
      }
      if (candidate) out.push(candidate);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      searchFrom = 0;
    }
    return out;
  }

  /** The rest of the answer, once it is complete. */
  flush(): string | null {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest || null;
  }

  /** What has been pushed but not returned as a sentence. */
  get held() {
    return this.buffer.trim();
  }
}

// What a per-utterance recogniser keeps of a call's audio (DESIGN "Voice
// agent", issue 44): the utterance from the VAD's start of speech less a short
// pre-roll to its end of speech plus a short post-roll. Outside an utterance
// only the last moments are kept, enough for the pre-roll of a start the
// session reports late; the agent's turn and the silence between turns are
// never sent. Positions are samples since the stream opened (its time).

/** Audio kept before the VAD's start of speech: onsets the detector scores low ("h", "f", "s"). */
export const PRE_ROLL_MS = 150;
/** Audio kept after the VAD's end of speech: a trailing consonant it already scored as silence. */
export const POST_ROLL_MS = 100;
/**
 * Audio kept outside an utterance: the pre-roll plus how late a start may be
 * reported (an asynchronous detector runs up to 1 s behind, session.ts
 * MAX_VAD_WAITING).
 */
export const LOOKBACK_MS = PRE_ROLL_MS + 1000;

export interface CutUtterance {
  pcm: Int16Array;
  /** Stream time of the first and past the last sample sent (ms). */
  startMs: number;
  endMs: number;
}

export class UtteranceWindow {
  private chunks: Int16Array[] = [];
  /** Stream position of the first held sample. */
  private heldFrom = 0;
  /** Samples written since the stream opened. */
  written = 0;
  /** Start of the open utterance, or null outside one. */
  private openFrom: number | null = null;
  /** End of the last cut: an utterance never reaches back before it (a false start does not leak into the next). */
  private lastCut = 0;
  /** The open utterance outgrew its longest length and lost its oldest audio. */
  truncated = false;
  private readonly maxSamples: number;
  private readonly lookbackSamples: number;

  constructor(
    readonly rate: number,
    maxUtteranceMs: number,
  ) {
    this.maxSamples = this.samplesOf(maxUtteranceMs);
    this.lookbackSamples = this.samplesOf(LOOKBACK_MS);
  }

  /** Where the open utterance starts (stream position), or null. */
  get utteranceStart(): number | null {
    return this.openFrom;
  }

  samplesOf(ms: number): number {
    return Math.round((ms * this.rate) / 1000);
  }

  msOf(position: number): number {
    return Math.round((position * 1000) / this.rate);
  }

  write(pcm: Int16Array): void {
    if (pcm.length === 0) return;
    this.chunks.push(pcm.slice());
    this.written += pcm.length;
    // A caller who never pauses cannot grow memory without end: an utterance keeps its last maxSamples.
    if (this.openFrom !== null && this.written - this.openFrom > this.maxSamples) {
      this.openFrom = this.written - this.maxSamples;
      this.truncated = true;
    }
    this.dropBefore(this.openFrom ?? this.written - this.lookbackSamples);
  }

  /** Opens an utterance whose speech began at `atMs` (default: now), with the pre-roll before it. */
  start(atMs?: number): void {
    if (this.openFrom !== null) return;
    const at = atMs === undefined ? this.written : Math.min(this.written, Math.max(0, this.samplesOf(atMs)));
    this.openFrom = Math.max(at - this.samplesOf(PRE_ROLL_MS), this.heldFrom, this.lastCut);
    this.truncated = false;
    this.dropBefore(this.openFrom);
  }

  /** Cuts the open utterance at `atMs` (the end of speech; default: now) plus the post-roll; null when none is open. */
  end(atMs?: number): CutUtterance | null {
    const from = this.openFrom;
    if (from === null) return null;
    const speechEnd = atMs === undefined ? this.written : this.samplesOf(atMs) + this.samplesOf(POST_ROLL_MS);
    const cut = Math.min(this.written, Math.max(from, speechEnd));
    const pcm = this.slice(from, cut);
    this.openFrom = null;
    this.lastCut = cut;
    this.dropBefore(Math.max(cut, this.written - this.lookbackSamples));
    return { pcm, startMs: this.msOf(from), endMs: this.msOf(cut) };
  }

  /** A copy of the held audio between two stream positions (clamped to what is held). */
  slice(from: number, to: number): Int16Array {
    const start = Math.max(from, this.heldFrom);
    const out = new Int16Array(Math.max(0, Math.min(to, this.written) - start));
    let position = this.heldFrom;
    let offset = 0;
    for (const chunk of this.chunks) {
      const chunkEnd = position + chunk.length;
      if (chunkEnd > start && offset < out.length) {
        const piece = chunk.subarray(
          Math.max(0, start - position),
          Math.min(chunk.length, start + out.length - position),
        );
        out.set(piece, offset);
        offset += piece.length;
      }
      position = chunkEnd;
    }
    return out;
  }

  private dropBefore(position: number): void {
    while (this.chunks.length > 0 && this.heldFrom + this.chunks[0]!.length <= position)
      this.heldFrom += this.chunks.shift()!.length;
    if (this.chunks.length > 0 && position > this.heldFrom) {
      this.chunks[0] = this.chunks[0]!.subarray(position - this.heldFrom);
      this.heldFrom = position;
    }
  }
}

// Audio sink: agent audio to the transport, paced in real time against the
// injected clock (20 ms frames, at most `leadMs` ahead of real time, never a
// whole sentence in one burst), a mark every `markEveryMs` of a segment and
// at its end, `clear()` that drops what is queued and tells the far end to
// stop. Played time per segment comes only from acknowledged marks; marks
// echoed after a clear are stale and ignored (Twilio echoes the marks it
// drops). A segment is one sentence of a reply.
import { FRAME_SAMPLES_8K, cutFrames } from '../../lib/audio.js';
import type { Timer, TimerClock } from '../../lib/clock.js';
import { type Pacer, pacerFor } from './pacer.js';
import type { CallRecording } from './recording.js';
import type { Transport } from './transport.js';

export const FRAME_MS = 20;

export interface SinkOptions {
  /** How far ahead of real time frames may be sent (a little slack against timer jitter). Default 40 ms. */
  leadMs?: number;
  /** A mark at least this often inside a segment, so a cut is known to this grain. Default 400 ms. */
  markEveryMs?: number;
  /** When a sent mark is not echoed this long after its audio should have played, playout counts as over (unheard). Default 2000 ms. */
  ackTimeoutMs?: number;
  recording?: CallRecording;
  /** Hears how late each frame left against its slot on the 20 ms timeline (ms; 0 when on time): outgoing pacing, for metrics. */
  onFrameLateness?: (ms: number) => void;
}

type QueueItem =
  | { kind: 'frame'; segment: number; samples: Int16Array }
  | { kind: 'mark'; segment: number; name: string; audioMs: number; last: boolean };

interface SegmentState {
  pending: Int16Array;
  writtenMs: number;
  playedMs: number;
  nextMarkAtMs: number;
  ended: boolean;
  cleared: boolean;
  firstFrameAtMs: number | null;
  /** Told when the segment's first frame goes out: the caller starts hearing it. */
  onFirstFrame?: (atMs: number) => void;
  /** Resolves when the segment's end mark is echoed, or the segment is cleared or timed out. */
  done: Promise<void>;
  finish: () => void;
}

export interface SinkListener {
  /** The first frame of a segment went out. */
  firstFrame?(segment: number, atMs: number): void;
  /** true when the agent starts being heard; false when everything sent has played (last mark echoed), was cleared, or timed out. */
  speaking?(speaking: boolean, atMs: number): void;
}

export class AudioSink {
  private queue: QueueItem[] = [];
  private segments = new Map<number, SegmentState>();
  private pendingMarks: Array<{ name: string; segment: number; audioMs: number; dueAtMs: number }> = [];
  private stale = new Set<string>();
  private nextSegment = 1;
  private markSeq = 0;
  private timer: Timer | null = null;
  private ackTimer: Timer | null = null;
  private timelineStart = 0;
  private framesOnTimeline = 0;
  private isSpeaking = false;
  private readonly leadMs: number;
  private readonly markEveryMs: number;
  private readonly ackTimeoutMs: number;
  private listeners: SinkListener[] = [];
  /** Send times of every frame (ms of the clock), for pacing measurements. */
  readonly sendTimes: number[] = [];
  private idleWaiters: Array<() => void> = [];
  /** The clock's shared pacing schedule: one timer for every sink, and a poll on every caller frame. */
  private readonly pacer: Pacer;

  constructor(
    private readonly transport: Transport,
    private readonly clock: TimerClock,
    private readonly options: SinkOptions = {},
  ) {
    this.leadMs = options.leadMs ?? 40;
    this.markEveryMs = options.markEveryMs ?? 400;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 2000;
    this.pacer = pacerFor(clock);
    transport.on('mark', (name) => this.acknowledge(name));
    // Any call's caller frame is a moment to send every call's due frames: between two callbacks of a long
    // event-loop turn rather than after it (the timer would wait for the whole turn).
    transport.on('audio', () => this.pacer.poll());
  }

  listen(listener: SinkListener) {
    this.listeners.push(listener);
  }

  get speaking() {
    return this.isSpeaking;
  }

  /** Opens a segment (one sentence); returns its id. `onFirstFrame` is told when its first frame goes out. */
  startSegment(onFirstFrame?: (atMs: number) => void): number {
    const id = this.nextSegment++;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.segments.set(id, {
      pending: new Int16Array(0),
      writtenMs: 0,
      playedMs: 0,
      nextMarkAtMs: this.markEveryMs,
      ended: false,
      cleared: false,
      firstFrameAtMs: null,
      onFirstFrame,
      done,
      finish,
    });
    return id;
  }

  /** Appends audio of any length to a segment; whole frames are queued at once. */
  write(segment: number, pcm: Int16Array) {
    // Speech arriving (for any call) is also a moment to send every call's due frames: a voice's chunks of
    // many calls can run as one long chain of promise callbacks, where no timer fires.
    this.pacer.poll();
    const state = this.segments.get(segment);
    if (!state || state.cleared || state.ended) return;
    const { frames, rest } = cutFrames(state.pending, pcm);
    for (const frame of frames) this.enqueueFrame(segment, state, frame);
    state.pending = rest;
    this.pump();
  }

  /** Closes a segment: the last partial frame is padded with silence and its end mark queued. */
  endSegment(segment: number) {
    const state = this.segments.get(segment);
    if (!state || state.cleared || state.ended) return;
    if (state.pending.length) {
      const frame = new Int16Array(FRAME_SAMPLES_8K);
      frame.set(state.pending);
      state.pending = new Int16Array(0);
      this.enqueueFrame(segment, state, frame, true);
    }
    state.ended = true;
    if (state.writtenMs === 0) state.finish();
    else if (!this.queue.some((i) => i.kind === 'mark' && i.segment === segment && i.last)) {
      // No partial frame to carry the end mark: queue it after the segment's last whole frame.
      this.queue.push({ kind: 'mark', segment, name: this.markName(), audioMs: state.writtenMs, last: true });
    }
    this.pump();
  }

  private enqueueFrame(segment: number, state: SegmentState, samples: Int16Array, last = false) {
    this.queue.push({ kind: 'frame', segment, samples });
    state.writtenMs += FRAME_MS;
    if (last) this.queue.push({ kind: 'mark', segment, name: this.markName(), audioMs: state.writtenMs, last: true });
    else if (state.writtenMs >= state.nextMarkAtMs) {
      state.nextMarkAtMs += this.markEveryMs;
      this.queue.push({ kind: 'mark', segment, name: this.markName(), audioMs: state.writtenMs, last: false });
    }
  }

  private markName() {
    return `m${++this.markSeq}`;
  }

  /** Audio of the segment known to have played (up to its last acknowledged mark), in ms. */
  playedMs(segment: number) {
    return this.segments.get(segment)?.playedMs ?? 0;
  }

  /** Audio of the segment queued so far, in ms. */
  audioMs(segment: number) {
    return this.segments.get(segment)?.writtenMs ?? 0;
  }

  firstFrameAt(segment: number) {
    return this.segments.get(segment)?.firstFrameAtMs ?? null;
  }

  /** Resolves once the segment has played to its end mark (or was cleared, or its marks timed out). */
  segmentDone(segment: number): Promise<void> {
    return this.segments.get(segment)?.done ?? Promise.resolve();
  }

  /** Resolves when nothing is queued and no mark is awaited. */
  idle(): Promise<void> {
    if (!this.queue.length && !this.pendingMarks.length) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Barge-in: drops everything queued, sends `clear`, and makes the marks still awaited stale. */
  clear() {
    this.queue = [];
    this.timer?.cancel();
    this.timer = null;
    for (const mark of this.pendingMarks) this.stale.add(mark.name);
    this.pendingMarks = [];
    for (const state of this.segments.values()) {
      if (!state.cleared && !(state.ended && state.playedMs >= state.writtenMs)) {
        state.cleared = true;
        state.finish();
      }
    }
    this.transport.sendClear();
    this.settle();
  }

  /** Sends what is due; `aheadMs` > 0 at an urgent-work point, which sends that much ahead (pacer.ts). */
  private pump(fromTimer = false, aheadMs = 0) {
    if (this.timer || !this.queue.length) return;
    const now = this.clock.now();
    // Audio arriving after the queue ran dry restarts the timeline now: pacing never catches up with a burst.
    // (A timer firing a little late keeps the timeline, so lateness does not add up.)
    if (this.framesOnTimeline === 0 || (!fromTimer && this.timelineStart + this.framesOnTimeline * FRAME_MS < now)) {
      this.timelineStart = now;
      this.framesOnTimeline = 0;
    }
    while (this.queue.length) {
      const head = this.queue[0]!;
      if (head.kind === 'mark') {
        this.queue.shift();
        this.sendMark(head);
        continue;
      }
      if (this.timelineStart + this.framesOnTimeline * FRAME_MS > now + this.leadMs + aheadMs) break;
      this.queue.shift();
      this.sendFrame(head, now, fromTimer);
    }
    if (this.queue.length) {
      const due = this.timelineStart + this.framesOnTimeline * FRAME_MS - this.leadMs;
      this.timer = this.pacer.schedule((aheadMs) => {
        this.timer = null;
        this.pump(true, aheadMs);
      }, due);
    } else this.armAckTimeout();
  }

  private sendFrame(item: Extract<QueueItem, { kind: 'frame' }>, now: number, fromTimer: boolean) {
    const state = this.segments.get(item.segment)!;
    // A frame is due `leadMs` before its slot, but never before its timeline began (the first frames go at once).
    // Only the pacer (its timer or a poll) can send a frame late: one sent as its audio arrives went the moment it existed (a voice
    // slower than real time eats into the lead, which is the voice's delay, not the pacing's).
    const slot = this.timelineStart + this.framesOnTimeline * FRAME_MS;
    this.options.onFrameLateness?.(fromTimer ? Math.max(0, now - Math.max(this.timelineStart, slot - this.leadMs)) : 0);
    this.transport.sendAudio(item.samples);
    this.sendTimes.push(now);
    this.options.recording?.writeAgent(
      item.samples,
      Math.max(now, this.timelineStart + this.framesOnTimeline * FRAME_MS),
    );
    this.framesOnTimeline++;
    if (state.firstFrameAtMs === null) {
      state.firstFrameAtMs = now;
      state.onFirstFrame?.(now);
      for (const l of this.listeners) l.firstFrame?.(item.segment, now);
    }
    if (!this.isSpeaking) {
      this.isSpeaking = true;
      for (const l of this.listeners) l.speaking?.(true, now);
    }
  }

  private sendMark(item: Extract<QueueItem, { kind: 'mark' }>) {
    this.transport.sendMark(item.name);
    this.pendingMarks.push({
      name: item.name,
      segment: item.segment,
      audioMs: item.audioMs,
      dueAtMs: this.timelineStart + this.framesOnTimeline * FRAME_MS,
    });
  }

  private acknowledge(name: string) {
    if (this.stale.delete(name)) return;
    const index = this.pendingMarks.findIndex((m) => m.name === name);
    if (index < 0) return;
    // Audio plays in order: an echoed mark means every earlier one has played too.
    for (const mark of this.pendingMarks.splice(0, index + 1)) {
      const state = this.segments.get(mark.segment)!;
      state.playedMs = Math.max(state.playedMs, mark.audioMs);
      if (state.ended && state.playedMs >= state.writtenMs) state.finish();
    }
    this.armAckTimeout();
    this.settle();
  }

  /** Marks that never come back (a far end that does not echo) must not keep the agent speaking forever. */
  private armAckTimeout() {
    this.ackTimer?.cancel();
    this.ackTimer = null;
    if (!this.pendingMarks.length || this.queue.length) return;
    const last = this.pendingMarks[this.pendingMarks.length - 1]!;
    const wait = last.dueAtMs + this.ackTimeoutMs - this.clock.now();
    this.ackTimer = this.clock.setTimeout(
      () => {
        this.ackTimer = null;
        for (const mark of this.pendingMarks) {
          this.stale.add(mark.name);
          this.segments.get(mark.segment)?.finish();
        }
        this.pendingMarks = [];
        this.settle();
      },
      Math.max(0, wait),
    );
  }

  private settle() {
    if (this.queue.length || this.pendingMarks.length) return;
    this.ackTimer?.cancel();
    this.ackTimer = null;
    this.framesOnTimeline = 0;
    if (this.isSpeaking) {
      this.isSpeaking = false;
      const now = this.clock.now();
      for (const l of this.listeners) l.speaking?.(false, now);
    }
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Stops timers (end of call); waiting promises resolve. */
  close() {
    this.timer?.cancel();
    this.ackTimer?.cancel();
    this.queue = [];
    this.pendingMarks = [];
    for (const state of this.segments.values()) state.finish();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

// What a per-utterance recogniser keeps (utterance-window.ts): the utterance
// from the VAD's start less the pre-roll to its end plus the post-roll, in
// stream time, whatever came before it; frames injected as a call gives them.
import { describe, expect, it } from 'vitest';
import {
  LOOKBACK_MS,
  POST_ROLL_MS,
  PRE_ROLL_MS,
  UtteranceWindow,
} from '../../src/providers/speech-to-text/utterance-window.js';

/** 20 ms frames at 8 kHz whose samples are their own stream position (mod 32768): what was kept is read back from the values. */
function writeMs(window: UtteranceWindow, ms: number) {
  for (let t = 0; t < ms; t += 20) {
    const frame = new Int16Array(window.rate / 50);
    for (let i = 0; i < frame.length; i++) frame[i] = (window.written + i) % 32768;
    window.write(frame);
  }
}
const positionOf = (sample: number, near: number) => near - ((((near - sample) % 32768) + 32768) % 32768);

describe('UtteranceWindow', () => {
  it('keeps the utterance from its start less the pre-roll to its end plus the post-roll, reported late, in stream time', () => {
    const window = new UtteranceWindow(8000, 30_000);
    writeMs(window, 6000); // the agent's greeting and the silence after it
    window.start(5000); // the detector tells at 6000 ms that speech began at 5000
    writeMs(window, 1600);
    const cut = window.end(7000)!; // told at 7600 that the last speech frame ended at 7000
    expect(cut).toMatchObject({ startMs: 5000 - PRE_ROLL_MS, endMs: 7000 + POST_ROLL_MS });
    expect(cut.pcm.length).toBe(((2000 + PRE_ROLL_MS + POST_ROLL_MS) * 8000) / 1000);
    expect(positionOf(cut.pcm[0]!, 8 * (5000 - PRE_ROLL_MS))).toBe(8 * (5000 - PRE_ROLL_MS));
    expect(cut.pcm[cut.pcm.length - 1]).toBe((8 * (7000 + POST_ROLL_MS) - 1) % 32768);
  });

  it('never reaches back past its lookback, nor past the end of the previous cut: a false start does not leak into the next utterance', () => {
    const window = new UtteranceWindow(8000, 30_000);
    writeMs(window, 10_000);
    window.start(1000); // a start reported far too late: only the lookback is there
    writeMs(window, 200);
    expect(window.end(10_100)!.startMs).toBe(10_000 - LOOKBACK_MS);

    // A cough over the agent (a false start): its own short utterance.
    writeMs(window, 500);
    window.start(10_600);
    writeMs(window, 300);
    const cough = window.end(10_700)!;
    expect(cough).toMatchObject({ startMs: 10_600 - PRE_ROLL_MS, endMs: 10_700 + POST_ROLL_MS });
    // The next speech starts 50 ms after the cough's cut: its pre-roll stops at that cut.
    writeMs(window, 100);
    window.start(10_900);
    writeMs(window, 1000);
    const next = window.end(11_800)!;
    expect(next.startMs).toBe(cough.endMs);
    expect(next.endMs).toBe(11_800 + POST_ROLL_MS);
  });

  it('cuts at what was written when the post-roll has not arrived, and gives nothing when no utterance is open', () => {
    const window = new UtteranceWindow(16_000, 30_000);
    expect(window.end()).toBeNull();
    writeMs(window, 1000);
    window.start();
    expect(window.utteranceStart).toBe(16 * (1000 - PRE_ROLL_MS));
    writeMs(window, 500);
    expect(window.end(1480)).toMatchObject({ startMs: 1000 - PRE_ROLL_MS, endMs: 1500 });
    expect(window.end()).toBeNull();
  });

  it('keeps only the last maxUtteranceMs of an utterance that never ends, and says it was cut short', () => {
    const window = new UtteranceWindow(8000, 5000);
    window.start(0);
    writeMs(window, 12_000);
    expect(window.truncated).toBe(true);
    const cut = window.end()!;
    expect(cut).toMatchObject({ startMs: 7000, endMs: 12_000 });
    expect(cut.pcm.length).toBe(5 * 8000);
    window.start();
    expect(window.truncated).toBe(false);
  });
});

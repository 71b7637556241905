// DTMF tones and their detector: every key survives μ-law (the call's
// audio), pauses and gaps are heard as such, speech-like sound is no key.
import { describe, expect, it } from 'vitest';
import { mulawToPcm, pcmToMulaw } from '../../src/lib/audio.js';
import { DTMF_PAUSE_MS, DtmfDetector, dtmfKeyOf, dtmfTones } from '../../src/lib/dtmf.js';

function hear(pcm: Int16Array): string {
  const detector = new DtmfDetector();
  for (let i = 0; i + 160 <= pcm.length; i += 160) detector.push(pcm.subarray(i, i + 160));
  return detector.heard.join('');
}

describe('dtmf', () => {
  it('every key is heard once, through μ-law, in order', () => {
    const keys = '0123456789*#ABCD';
    expect(hear(mulawToPcm(pcmToMulaw(dtmfTones(keys))))).toBe(keys);
  });

  it('a pause is silence of its length; a repeated key is heard twice (the gap between)', () => {
    const tones = dtmfTones('1w1');
    expect(tones.length).toBe((200 + DTMF_PAUSE_MS + 200) * 8);
    expect(hear(tones)).toBe('11');
    expect(dtmfTones('x?').length).toBe(0);
  });

  it('hears no key in silence, a single tone or a chord of other notes', () => {
    const sine = (hz: number[]) => {
      const out = new Int16Array(160);
      for (let i = 0; i < 160; i++)
        out[i] = Math.round(hz.reduce((s, f) => s + 3000 * Math.sin((2 * Math.PI * f * i) / 8000), 0));
      return out;
    };
    expect(dtmfKeyOf(new Int16Array(160))).toBeNull();
    expect(dtmfKeyOf(sine([697]))).toBeNull();
    expect(dtmfKeyOf(sine([220, 440, 660]))).toBeNull();
    expect(dtmfKeyOf(sine([697, 1209]))).toBe('1');
  });
});

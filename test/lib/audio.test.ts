import { describe, expect, it } from 'vitest';
import {
  decodeWav,
  encodeMulawSample,
  encodeWav,
  MULAW_ENCODE,
  mulawToPcm,
  pcmToMulaw,
  pcmToMulawInto,
  resample,
} from '../../src/lib/audio.js';
import { parseWav } from '../support/wav.js';

describe('μ-law', () => {
  it('decodes the G.711 reference points', () => {
    expect(Array.from(mulawToPcm(Uint8Array.from([0xff, 0x7f, 0x80, 0x00])))).toEqual([0, 0, 32124, -32124]);
  });
  it('encodes every decoded value back to the same byte (except the two zeros)', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const again = pcmToMulaw(mulawToPcm(all));
    for (let i = 0; i < 256; i++) if (i !== 0x7f) expect(again[i]).toBe(i);
  });
  it('encodes through a table equal to the G.711 formula for all 65,536 samples', () => {
    expect(MULAW_ENCODE.length).toBe(65536);
    const all = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const encoded = pcmToMulaw(all);
    for (let i = 0; i < all.length; i++) {
      expect(encoded[i]).toBe(encodeMulawSample(all[i]!));
      expect(MULAW_ENCODE[all[i]! & 0xffff]).toBe(encodeMulawSample(all[i]!));
    }
    // The G.711 segment ends, by hand: zero, the clip level, and both signs.
    expect([0, -1, 32767, -32768, 32635, 100, -100].map(encodeMulawSample)).toEqual([
      0xff, 0x7f, 0x80, 0x00, 0x80, 0xf2, 0x72,
    ]);
  });
  it('pcmToMulawInto writes into the given buffer and returns it', () => {
    const out = Buffer.alloc(4, 0xaa);
    const samples = Int16Array.from([0, 1000, -1000]);
    expect(pcmToMulawInto(samples, out)).toBe(out);
    expect(Array.from(out)).toEqual([...Array.from(pcmToMulaw(samples)), 0xaa]);
  });
  it('keeps a tone within μ-law quantisation error', () => {
    const tone = Int16Array.from({ length: 800 }, (_, i) =>
      Math.round(10_000 * Math.sin((2 * Math.PI * 440 * i) / 8000)),
    );
    const back = mulawToPcm(pcmToMulaw(tone));
    for (let i = 0; i < tone.length; i++)
      expect(Math.abs(back[i]! - tone[i]!)).toBeLessThanOrEqual(Math.abs(tone[i]!) / 16 + 8);
  });
});

describe('resample', () => {
  it('changes the length by the ratio and keeps a low tone', () => {
    const tone = Int16Array.from({ length: 22050 }, (_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / 22050)),
    );
    const out = resample(tone, 22050, 8000);
    expect(out.length).toBe(8000);
    // 300 Hz at 8 kHz: compare with the ideal tone away from the edges.
    for (let i = 100; i < 7900; i += 97)
      expect(Math.abs(out[i]! - 8000 * Math.sin((2 * Math.PI * 300 * i) / 8000))).toBeLessThan(800);
    expect(resample(out, 8000, 16000).length).toBe(16000);
  });
});

describe('WAV', () => {
  it('writes a file a player reads, and reads it back', () => {
    const stereo = Int16Array.from([1, -1, 2, -2, 3, -3]);
    const wav = encodeWav(stereo, 8000, 2);
    const parsed = parseWav(wav);
    expect(parsed).toMatchObject({ channels: 2, sampleRate: 8000, bitsPerSample: 16 });
    expect(Array.from(decodeWav(wav).samples)).toEqual([1, -1, 2, -2, 3, -3]);
  });
});

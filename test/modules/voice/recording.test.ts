import { describe, expect, it } from 'vitest';
import { decodeWav } from '../../../src/lib/audio.js';
import { CallRecording, recordingWav } from '../../../src/modules/voice/recording.js';

describe('the call recording', () => {
  it('writes the two channels interleaved into one WAV, the shorter one padded with silence', () => {
    const wav = recordingWav({ caller: Int16Array.from([1, 2, 3]), agent: Int16Array.from([-1, -2, -3, -4, -5]) });
    const decoded = decodeWav(wav);
    expect(decoded.sampleRate).toBe(8000);
    expect(decoded.channels).toBe(2);
    expect(Array.from(decoded.samples)).toEqual([1, -1, 2, -2, 3, -3, 0, -4, 0, -5]);
    expect(wav.length).toBe(44 + 10 * 2);
  });

  it('gives channels of equal length, silence where a channel has nothing, whether or not a channel outgrew its first store', () => {
    const recording = new CallRecording(0, 60);
    // The agent speaks 2 s in; the caller goes on for 12 s, past the first store of 10 s.
    recording.writeAgent(new Int16Array(160).fill(7), 2000);
    for (let i = 0; i < 600; i++) recording.writeCaller(new Int16Array(160).fill(i % 100 === 0 ? 3 : 1));
    const { caller, agent } = recording.channels();
    expect(caller.length).toBe(12 * 8000);
    expect(agent.length).toBe(caller.length);
    expect(agent.subarray(0, 16_000).every((s) => s === 0)).toBe(true);
    expect(agent.subarray(16_000, 16_160).every((s) => s === 7)).toBe(true);
    expect(agent.subarray(16_160).every((s) => s === 0)).toBe(true);
    const samples = decodeWav(recordingWav({ caller, agent })).samples;
    expect(samples.length).toBe(2 * 12 * 8000);
    expect(samples[2 * 16_000 + 1]).toBe(7);
    expect(samples[2 * 16_160 + 1]).toBe(0);
    expect(samples[2 * 100 * 160]).toBe(3);
  });
});

// Audio codecs for calls: G.711 μ-law ↔ PCM16, sample-rate conversion, WAV.
// The voice pipeline works on PCM16 mono 8 kHz (what a phone carries);
// transports and providers convert at their edges with these functions.

/** Samples per 20 ms frame at 8 kHz: the unit of Twilio Media Streams. */
export const FRAME_SAMPLES_8K = 160;
export const PIPELINE_SAMPLE_RATE = 8000;

/**
 * Cuts audio of any length into whole 20 ms frames, carrying the remainder:
 * `carry` is what was left over last time, `rest` what is left now.
 */
export function cutFrames(carry: Int16Array, samples: Int16Array): { frames: Int16Array[]; rest: Int16Array } {
  let data = samples;
  if (carry.length) {
    data = new Int16Array(carry.length + samples.length);
    data.set(carry);
    data.set(samples, carry.length);
  }
  const frames: Int16Array[] = [];
  let offset = 0;
  for (; offset + FRAME_SAMPLES_8K <= data.length; offset += FRAME_SAMPLES_8K)
    frames.push(data.slice(offset, offset + FRAME_SAMPLES_8K));
  return { frames, rest: data.slice(offset) };
}

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 32635;

/** μ-law byte → linear sample (ITU-T G.711), precomputed once. */
const MULAW_DECODE = (() => {
  const table = new Int16Array(256);
  for (let i = 0; i < 256; i++) {
    const u = ~i & 0xff;
    const exponent = (u >> 4) & 0x07;
    const mantissa = u & 0x0f;
    const magnitude = (((mantissa << 3) + MULAW_BIAS) << exponent) - MULAW_BIAS;
    table[i] = u & 0x80 ? -magnitude : magnitude;
  }
  return table;
})();

export function mulawToPcm(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = MULAW_DECODE[bytes[i]!]!;
  return out;
}

/** The G.711 μ-law encoding of one linear sample (the reference formula the encode table is built from). */
export function encodeMulawSample(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0;
  let magnitude = Math.min(sign ? -sample : sample, MULAW_CLIP) + MULAW_BIAS;
  let exponent = 7;
  for (let mask = 0x4000; exponent > 0 && (magnitude & mask) === 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  magnitude = ~(sign | (exponent << 4) | mantissa) & 0xff;
  return magnitude;
}

/**
 * Linear sample → μ-law byte for all 65,536 PCM16 values (64 KB, built once), indexed by the sample's 16 bits
 * (`sample & 0xffff`): every caller frame (to the recogniser) and agent frame (to Twilio) is encoded, and a table
 * read is a fraction of the formula's loop.
 */
export const MULAW_ENCODE = (() => {
  const table = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = encodeMulawSample(i < 32768 ? i : i - 65536);
  return table;
})();

export function pcmToMulaw(samples: Int16Array): Uint8Array {
  return pcmToMulawInto(samples, new Uint8Array(samples.length));
}

/** pcmToMulaw into a given buffer (at least `samples.length` bytes): no allocation per frame. */
export function pcmToMulawInto<T extends Uint8Array>(samples: Int16Array, out: T): T {
  for (let i = 0; i < samples.length; i++) out[i] = MULAW_ENCODE[samples[i]! & 0xffff]!;
  return out;
}

/**
 * Converts PCM16 mono between sample rates. Downsampling first smooths with a
 * moving average as wide as the ratio (a cheap low-pass against aliasing);
 * then linear interpolation. Good enough for speech at phone quality; each call
 * converts a sentence or a frame, so it stays allocation-light and O(n).
 */
export function resample(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate || samples.length === 0) return samples;
  let source: Float32Array | Int16Array = samples;
  if (toRate < fromRate) {
    const width = Math.max(1, Math.round(fromRate / toRate));
    if (width > 1) {
      const smoothed = new Float32Array(samples.length);
      let sum = 0;
      for (let i = 0; i < samples.length; i++) {
        sum += samples[i]!;
        if (i >= width) sum -= samples[i - width]!;
        smoothed[i] = sum / Math.min(i + 1, width);
      }
      source = smoothed;
    }
  }
  const outLength = Math.max(1, Math.round((samples.length * toRate) / fromRate));
  const out = new Int16Array(outLength);
  const step = fromRate / toRate;
  const last = source.length - 1;
  for (let i = 0; i < outLength; i++) {
    const position = i * step;
    const index = Math.floor(position);
    const fraction = position - index;
    const a = source[Math.min(index, last)]!;
    const b = source[Math.min(index + 1, last)]!;
    out[i] = Math.max(-32768, Math.min(32767, Math.round(a + (b - a) * fraction)));
  }
  return out;
}

/** A PCM16 WAV file of interleaved samples. */
export function encodeWav(samples: Int16Array, sampleRate: number, channels = 1): Buffer {
  const { file, data } = emptyWav(samples.length, sampleRate, channels);
  data.set(samples);
  return file;
}

export const WAV_HEADER_BYTES = 44;

/** A PCM16 WAV file of `sampleCount` (interleaved) zero samples, and its data as samples to fill in place. */
export function emptyWav(sampleCount: number, sampleRate: number, channels = 1): { file: Buffer; data: Int16Array } {
  const dataBytes = sampleCount * 2;
  // Its own zero-filled ArrayBuffer (Buffer.alloc never pools), so the data is 2-byte aligned at 44.
  const out = Buffer.alloc(WAV_HEADER_BYTES + dataBytes);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write('WAVE', 8, 'latin1');
  out.write('fmt ', 12, 'latin1');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * channels * 2, 28);
  out.writeUInt16LE(channels * 2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'latin1');
  out.writeUInt32LE(dataBytes, 40);
  return { file: out, data: new Int16Array(out.buffer, out.byteOffset + WAV_HEADER_BYTES, sampleCount) };
}

export interface DecodedWav {
  sampleRate: number;
  channels: number;
  /** Interleaved PCM16 samples. */
  samples: Int16Array;
}

/** Reads a PCM16 WAV (RIFF, fmt, data chunks in any order; other chunks skipped). Throws on anything else. */
export function decodeWav(bytes: Uint8Array): DecodedWav {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE')
    throw new Error('not a RIFF/WAVE file');
  let offset = 12;
  let format: { channels: number; sampleRate: number; bits: number; tag: number } | null = null;
  let data: Buffer | null = null;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('latin1', offset, offset + 4);
    // Streamed WAVs (espeak-ng to a pipe) declare 0xFFFFFFFF: take what is there.
    const size = Math.min(buf.readUInt32LE(offset + 4), buf.length - offset - 8);
    const body = buf.subarray(offset + 8, offset + 8 + size);
    if (id === 'fmt ')
      format = {
        tag: body.readUInt16LE(0),
        channels: body.readUInt16LE(2),
        sampleRate: body.readUInt32LE(4),
        bits: body.readUInt16LE(14),
      };
    else if (id === 'data') data = body;
    offset += 8 + size + (size % 2);
  }
  if (!format || !data) throw new Error('WAV without fmt or data chunk');
  if (format.tag !== 1 || format.bits !== 16)
    throw new Error(`unsupported WAV encoding (format ${format.tag}, ${format.bits} bits)`);
  const even = data.length - (data.length % 2);
  const samples = new Int16Array(even / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
  return { sampleRate: format.sampleRate, channels: format.channels, samples };
}

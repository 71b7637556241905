// Reads a PCM WAV file the way a player does: RIFF/WAVE header, fmt chunk,
// data chunk; and measures its loudness, so tests can tell speech from silence.
export interface ParsedWav {
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  samples: Int16Array;
  durationSeconds: number;
  /** Root mean square of the 16-bit samples (silence is 0; speech is in the thousands). */
  rms: number;
}

export function parseWav(bytes: Uint8Array): ParsedWav {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE')
    throw new Error('not a RIFF/WAVE file');
  let offset = 12;
  let fmt: { format: number; channels: number; sampleRate: number; bitsPerSample: number } | null = null;
  let data: Buffer | null = null;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('latin1', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    if (offset + 8 + size > buf.length)
      throw new Error(`WAV chunk "${id}" declares ${size} bytes but the file ends first`);
    const body = buf.subarray(offset + 8, Math.min(buf.length, offset + 8 + size));
    if (id === 'fmt ')
      fmt = {
        format: body.readUInt16LE(0),
        channels: body.readUInt16LE(2),
        sampleRate: body.readUInt32LE(4),
        bitsPerSample: body.readUInt16LE(14),
      };
    if (id === 'data') data = body;
    offset += 8 + size + (size % 2);
  }
  if (!fmt || !data) throw new Error('WAV without fmt or data chunk');
  if (buf.readUInt32LE(4) !== buf.length - 8) throw new Error('RIFF size does not match the file length');
  if (fmt.format !== 1 || fmt.bitsPerSample !== 16)
    throw new Error(`unsupported WAV: format ${fmt.format}, ${fmt.bitsPerSample} bits`);
  const samples = new Int16Array(
    data.buffer.slice(data.byteOffset, data.byteOffset + (data.length - (data.length % 2))),
  );
  let sum = 0;
  for (const s of samples) sum += s * s;
  return {
    ...fmt,
    samples,
    durationSeconds: samples.length / fmt.channels / fmt.sampleRate,
    rms: samples.length ? Math.sqrt(sum / samples.length) : 0,
  };
}

// Audio and waiting helpers for the voice provider tests: speech-like tones
// and silence in the pipeline's format (PCM16 mono 8 kHz).

/** A tone as loud as speech, `ms` long, at 8 kHz. */
export function tone(ms: number, hz = 440, amplitude = 8000): Int16Array {
  return Int16Array.from({ length: (ms * 8000) / 1000 }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / 8000)),
  );
}

export function silence(ms: number): Int16Array {
  return new Int16Array((ms * 8000) / 1000);
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Splits into 20 ms frames, as a phone call delivers them. */
export function frames(samples: Int16Array, size = 160): Int16Array[] {
  const out: Int16Array[] = [];
  for (let i = 0; i < samples.length; i += size) out.push(samples.subarray(i, i + size));
  return out;
}

/** Resolves once `check` is true; fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Reads an async iterable to its end, or to its failure (returned, not thrown). */
export async function drain<T>(iterable: AsyncIterable<T>): Promise<{ values: T[]; error: unknown }> {
  const values: T[] = [];
  try {
    for await (const value of iterable) values.push(value);
    return { values, error: null };
  } catch (error) {
    return { values, error };
  }
}

/** RMS of each 20 ms frame of PCM16 at `rate`. */
export function frameRms(pcm: Int16Array, rate = 8000): number[] {
  const size = rate / 50;
  const out: number[] = [];
  for (let at = 0; at + size <= pcm.length; at += size) {
    let sum = 0;
    for (let i = at; i < at + size; i++) sum += pcm[i]! * pcm[i]!;
    out.push(Math.sqrt(sum / size));
  }
  return out;
}

/**
 * The speech a synthesised line holds (ms): from the first to the last run of
 * 100 ms above -40 dBFS, without its quiet edges (flite starts with a click).
 */
export function speechSpanMs(pcm: Int16Array, rate = 8000): number {
  const voiced = frameRms(pcm, rate).map((r) => r > 330);
  const inRun: boolean[] = voiced.map(() => false);
  let runStart = -1;
  for (let f = 0; f <= voiced.length; f++) {
    if (f < voiced.length && voiced[f]) {
      if (runStart < 0) runStart = f;
      continue;
    }
    if (runStart >= 0 && f - runStart >= 5) inRun.fill(true, runStart, f);
    runStart = -1;
  }
  const first = inRun.indexOf(true);
  return first < 0 ? 0 : (inRun.lastIndexOf(true) - first + 1) * 20;
}

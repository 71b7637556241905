// DTMF as sound (ITU-T Q.23/Q.24), 8 kHz PCM: the tones a pathway's digits
// node plays into the call, in band, so any carrier passes them on as a
// phone's keypad would (a Media Stream cannot send DTMF events); and a
// detector (Goertzel filters over 20 ms frames) with which the sandbox
// carrier's simulated party hears them.

const ROWS = [697, 770, 852, 941] as const;
const COLUMNS = [1209, 1336, 1477, 1633] as const;
const KEYS = ['123A', '456B', '789C', '*0#D'];
const RATE = 8000;

/** Each key sounds this long, then this much silence (a phone's keypad is about as fast). */
export const DTMF_TONE_MS = 100;
export const DTMF_GAP_MS = 100;
/** `w` in a digits string: half a second's pause. */
export const DTMF_PAUSE_MS = 500;

function frequencies(key: string): [number, number] | null {
  for (const [row, keys] of KEYS.entries()) {
    const column = keys.indexOf(key.toUpperCase());
    if (column >= 0) return [ROWS[row]!, COLUMNS[column]!];
  }
  return null;
}

/** The sound of `digits` (0-9 * # A-D; `w` a pause), 8 kHz PCM16. Other characters are skipped. */
export function dtmfTones(digits: string, amplitude = 7000): Int16Array {
  const tone = (DTMF_TONE_MS * RATE) / 1000;
  const gap = (DTMF_GAP_MS * RATE) / 1000;
  const pause = (DTMF_PAUSE_MS * RATE) / 1000;
  const parts: Int16Array[] = [];
  for (const key of digits) {
    if (key === 'w' || key === 'W') {
      parts.push(new Int16Array(pause));
      continue;
    }
    const f = frequencies(key);
    if (!f) continue;
    const samples = new Int16Array(tone + gap);
    for (let i = 0; i < tone; i++)
      samples[i] = Math.round(
        amplitude * (Math.sin((2 * Math.PI * f[0] * i) / RATE) + Math.sin((2 * Math.PI * f[1] * i) / RATE)) * 0.5,
      );
    parts.push(samples);
  }
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** The share of a frame's energy at `hz` (1 for a pure sine there). */
function share(frame: Int16Array, hz: number, energy: number): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < frame.length; i++) {
    const s0 = frame[i]! + coefficient * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coefficient * s1 * s2;
  return (2 * power) / (frame.length * energy);
}

/** The key a 20 ms frame sounds, or null: one row and one column tone holding most of its energy. */
export function dtmfKeyOf(frame: Int16Array): string | null {
  let energy = 0;
  for (let i = 0; i < frame.length; i++) energy += frame[i]! * frame[i]!;
  // Quieter than about -40 dBFS: nothing.
  if (energy / frame.length < 100 * 100) return null;
  const strongest = (tones: readonly number[]) => {
    const shares = tones.map((hz) => share(frame, hz, energy));
    const best = shares.indexOf(Math.max(...shares));
    const second = Math.max(...shares.filter((_, i) => i !== best));
    return { index: best, share: shares[best]!, second };
  };
  const row = strongest(ROWS);
  const column = strongest(COLUMNS);
  if (row.share < 0.2 || column.share < 0.2 || row.share + column.share < 0.7) return null;
  if (row.second > row.share / 4 || column.second > column.share / 4) return null;
  return KEYS[row.index]![column.index]!;
}

/** Hears keys in a stream of 20 ms frames: a key counts once when two frames in a row sound it, again only after a frame that does not. */
export class DtmfDetector {
  private last: string | null = null;
  private counted = false;
  readonly heard: string[] = [];

  push(frame: Int16Array): string | null {
    const key = dtmfKeyOf(frame);
    if (key === null || key !== this.last) {
      this.last = key;
      this.counted = false;
      return null;
    }
    if (this.counted) return null;
    this.counted = true;
    this.heard.push(key);
    return key;
  }
}

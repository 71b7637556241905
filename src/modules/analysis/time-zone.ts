// Days in a caller's time zone without a time-zone database in SQL: a range
// of time is cut where the zone's UTC offset changes (daylight saving time),
// so that within each piece a call's local day is (created_at + offset) /
// 86,400,000, the same integer arithmetic on SQLite and PostgreSQL.
import { invalidInput } from '../../http/errors.js';

export const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw invalidInput(`tz ${JSON.stringify(timeZone)} is not an IANA time zone (such as Europe/Berlin)`);
    }
    if (formatters.size > 500) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** Checks that `timeZone` is one the runtime knows (400 otherwise). */
export function checkTimeZone(timeZone: string): void {
  formatter(timeZone);
}

/** The zone's offset from UTC at `ms`, in ms (Europe/Berlin in winter: 3,600,000). */
export function offsetAt(timeZone: string, ms: number): number {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const local = Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!, +parts.second!);
  return local - Math.floor(ms / 1000) * 1000;
}

type Pieces = ReadonlyArray<{ until: number; offset: number }>;
/** Pieces already found (a dashboard asks for the same range again and again; finding them costs ~100 formats). */
const known = new Map<string, Pieces>();

/** Where the offset is constant over [from, to): pieces `{ until, offset }` in order, the last one's `until` is `to`. */
export function offsetPieces(timeZone: string, from: number, to: number): Pieces {
  const key = `${timeZone} ${from} ${to}`;
  let pieces = known.get(key);
  if (!pieces) {
    pieces = findPieces(timeZone, from, to);
    if (known.size >= 500) known.clear();
    known.set(key, pieces);
  }
  return pieces;
}

function findPieces(timeZone: string, from: number, to: number): Pieces {
  const pieces: Array<{ until: number; offset: number }> = [];
  let start = from;
  let offset = offsetAt(timeZone, start);
  // Zones change their offset at most a few times a year, never twice within six hours.
  const step = 6 * 3600_000;
  for (let t = start + step; t < to + step; t += step) {
    const probe = Math.min(t, to);
    if (offsetAt(timeZone, probe) === offset) continue;
    // The change is in (probe - step, probe]: find its very second (zones change on a whole second, and a call
    // even a second past it is on the new offset: where clocks go back at midnight, on the day before).
    let lo = Math.floor(Math.max(start, probe - step) / 1000);
    let hi = Math.floor(probe / 1000);
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (offsetAt(timeZone, mid * 1000) === offset) lo = mid;
      else hi = mid;
    }
    pieces.push({ until: hi * 1000, offset });
    start = hi * 1000;
    offset = offsetAt(timeZone, start);
  }
  pieces.push({ until: to, offset });
  return pieces;
}

/** The UTC ms of local midnight starting `date` (YYYY-MM-DD) in the zone. */
export function localMidnight(timeZone: string, date: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(y, m - 1, d);
  // Twice: the offset at the guessed instant may differ from the one at midnight itself.
  let at = guess - offsetAt(timeZone, guess);
  at = guess - offsetAt(timeZone, at);
  return at;
}

/** The local day number (days since 1970-01-01 in the zone's calendar) as YYYY-MM-DD. */
export function dayKey(dayNumber: number): string {
  return new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
}

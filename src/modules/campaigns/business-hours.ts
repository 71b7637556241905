// Business hours (DESIGN.md "Campaigns"): a contact is dialled only on the
// schedule's days, between its `from` and `to`, in the contact's own time
// zone (the contact's, else the campaign's, else its number's country's when
// the country has one zone, else UTC), and within `startAt`-`endAt`. Pure
// code on epoch milliseconds, so tests move a clock through it.
import { countryOfNumber } from '../../lib/phone-country.js';

export const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Day = (typeof DAYS)[number];

export interface Schedule {
  timezone?: string;
  days?: Day[];
  /** "HH:MM", local time. */
  from?: string;
  to?: string;
  startAt?: number;
  endAt?: number;
}

/** Countries with a single time zone (those with several fall back to the campaign's zone, else UTC). */
const COUNTRY_ZONE: Record<string, string> = {
  GB: 'Europe/London',
  IE: 'Europe/Dublin',
  FR: 'Europe/Paris',
  DE: 'Europe/Berlin',
  NL: 'Europe/Amsterdam',
  BE: 'Europe/Brussels',
  ES: 'Europe/Madrid',
  IT: 'Europe/Rome',
  CH: 'Europe/Zurich',
  AT: 'Europe/Vienna',
  DK: 'Europe/Copenhagen',
  SE: 'Europe/Stockholm',
  NO: 'Europe/Oslo',
  PL: 'Europe/Warsaw',
  GR: 'Europe/Athens',
  HU: 'Europe/Budapest',
  RO: 'Europe/Bucharest',
  PT: 'Europe/Lisbon',
  FI: 'Europe/Helsinki',
  CZ: 'Europe/Prague',
  IN: 'Asia/Kolkata',
  JP: 'Asia/Tokyo',
  SG: 'Asia/Singapore',
  NZ: 'Pacific/Auckland',
  ZA: 'Africa/Johannesburg',
  EG: 'Africa/Cairo',
  PE: 'America/Lima',
  IL: 'Asia/Jerusalem',
};

const formats = new Map<string, Intl.DateTimeFormat>();
function format(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(zone, f);
  }
  return f;
}

/** true for a zone Intl knows (IANA names such as Europe/Paris, and UTC). */
export function validZone(zone: string): boolean {
  try {
    format(zone);
    return true;
  } catch {
    return false;
  }
}

/** "HH:MM" to minutes after midnight, or null. */
export function parseClock(value: string): number | null {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(value);
  return m ? Number(m[1]) * 60 + Number(m[2]) : value === '24:00' ? 1440 : null;
}

/** The contact's zone: its own, the campaign's, its country's single zone, else UTC. */
export function contactZone(contact: { timezone: string | null; phone: string }, schedule: Schedule): string {
  if (contact.timezone) return contact.timezone;
  if (schedule.timezone) return schedule.timezone;
  const country = countryOfNumber(contact.phone);
  return (country && COUNTRY_ZONE[country]) || 'UTC';
}

/** Local weekday and minute of the day at `at` in `zone`. */
function local(at: number, zone: string): { day: Day; minute: number } {
  let weekday = 'Sun';
  let hour = 0;
  let minute = 0;
  for (const part of format(zone).formatToParts(at)) {
    if (part.type === 'weekday') weekday = part.value;
    else if (part.type === 'hour') hour = Number(part.value);
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { day: weekday.slice(0, 3).toLowerCase() as Day, minute: hour * 60 + minute };
}

function window(schedule: Schedule): { from: number; to: number } {
  return { from: parseClock(schedule.from ?? '00:00') ?? 0, to: parseClock(schedule.to ?? '24:00') ?? 1440 };
}

/** Whether a contact in `zone` may be dialled at `at`. */
export function isOpen(at: number, zone: string, schedule: Schedule): boolean {
  if (schedule.startAt !== undefined && at < schedule.startAt) return false;
  if (schedule.endAt !== undefined && at >= schedule.endAt) return false;
  const { day, minute } = local(at, zone);
  if (schedule.days && !schedule.days.includes(day)) return false;
  const { from, to } = window(schedule);
  return minute >= from && minute < to;
}

/**
 * The next moment at or after `at` when a contact in `zone` may be dialled,
 * or null when there is none (past `endAt`). Found by jumping to each day's
 * `from` and checking it, so a daylight-saving shift costs one extra step.
 */
export function nextOpening(at: number, zone: string, schedule: Schedule): number | null {
  if (schedule.endAt !== undefined && at >= schedule.endAt) return null;
  let t = schedule.startAt !== undefined && at < schedule.startAt ? schedule.startAt : at;
  if (isOpen(t, zone, schedule)) return t;
  const { from } = window(schedule);
  for (let step = 0; step < 10; step++) {
    const { minute } = local(t, zone);
    // Whole minutes: the local clock of `t` rounded down, then to this day's `from`, else the next day's.
    const base = t - (t % 60_000);
    let candidate = base + (from - minute) * 60_000;
    if (candidate <= t) candidate += 1440 * 60_000;
    for (const shift of [0, -60, 60]) {
      const c = candidate + shift * 60_000;
      if (c > t && isOpen(c, zone, schedule)) return c;
    }
    t = candidate;
    if (schedule.endAt !== undefined && t >= schedule.endAt) return null;
  }
  return null;
}

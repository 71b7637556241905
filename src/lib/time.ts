/** Epoch milliseconds (as stored) to the ISO-8601 string the API answers with. */
export function iso(value: number): string {
  const ms = Number(value);
  // toISOString costs about a microsecond (more under load) and every object answer
  // has timestamps: format the date once per day and the time by hand.
  if (!(ms >= 0 && ms < LAST_FOUR_DIGIT_YEAR_MS)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    cachedDay = day;
    cachedDayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11); // "2026-11-22T"
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${cachedDayPrefix}${two(hours)}:${two(minutes)}:${two(seconds)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

const DAY_MS = 86_400_000;
/** 10000-01-01T00:00:00.000Z: from there on the year has more digits (and a sign). */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_800_000;
let cachedDay = -1;
let cachedDayPrefix = '';
const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** The same instant `months` calendar months later (UTC), the day clamped to the month's end, as monthly billing counts. */
export function addMonthsUtc(ms: number, months: number): number {
  const d = new Date(ms);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  return Date.UTC(
    target.getUTCFullYear(),
    target.getUTCMonth(),
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}

/** Start of the calendar month (UTC) that contains `ms`. */
export function monthStartUtc(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

// Calendar-month arithmetic of billing periods (UTC).
import { describe, expect, it } from 'vitest';
import { addMonthsUtc, monthStartUtc } from '../../../src/lib/time.js';

const at = (iso: string) => Date.parse(iso);

describe('billing period arithmetic', () => {
  it('adds calendar months, clamping the day to the month end', () => {
    expect(addMonthsUtc(at('2026-01-31T10:00:00.000Z'), 1)).toBe(at('2026-02-28T10:00:00.000Z'));
    expect(addMonthsUtc(at('2028-01-31T10:00:00.000Z'), 1)).toBe(at('2028-02-29T10:00:00.000Z'));
    expect(addMonthsUtc(at('2026-11-23T20:00:00.123Z'), 1)).toBe(at('2026-12-23T20:00:00.123Z'));
    expect(addMonthsUtc(at('2026-12-15T00:00:00.000Z'), 1)).toBe(at('2027-01-15T00:00:00.000Z'));
  });

  it('finds the start of the month', () => {
    expect(monthStartUtc(at('2026-11-23T20:00:00.000Z'))).toBe(at('2026-11-01T00:00:00.000Z'));
    expect(monthStartUtc(at('2026-11-01T00:00:00.000Z'))).toBe(at('2026-11-01T00:00:00.000Z'));
  });
});

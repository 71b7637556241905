// The `*` wildcard matcher: same answers as the anchored regular expression it
// replaced, in a number of steps linear in text and pattern (counted, not timed).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type StepMeter, WildcardPattern } from '../../src/lib/wildcard.js';

/** The old implementation, as the reference for small inputs only. */
const reference = (pattern: string, text: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  ).test(text);

const steps = (pattern: string, text: string) => {
  const meter: StepMeter = { steps: 0 };
  const result = new WildcardPattern(pattern).matches(text, meter);
  return { result, steps: meter.steps };
};

describe('WildcardPattern', () => {
  it('matches exact text, prefixes, suffixes and ordered segments, * matching any run (even empty)', () => {
    const m = (p: string, t: string) => new WildcardPattern(p).matches(t);
    expect(m('abc', 'abc')).toBe(true);
    expect(m('abc', 'abcd')).toBe(false);
    expect(m('0193*', '0193abc')).toBe(true);
    expect(m('0193*', 'x0193abc')).toBe(false);
    expect(m('*abc', 'xxabc')).toBe(true);
    expect(m('*9*c', '0193abc')).toBe(true);
    expect(m('a*a', 'a')).toBe(false); // head and tail may not overlap
    expect(m('ab*ba', 'aba')).toBe(false);
    expect(m('*aa*aa*', 'aaa')).toBe(false); // middle segments may not overlap
    expect(m('*aa*aa*', 'aaaa')).toBe(true);
    expect(m('*', '')).toBe(true);
    expect(m('**', 'x')).toBe(true);
    expect(m('a**b', 'ab')).toBe(true);
    expect(m('x*\n*y', 'x\n\ny')).toBe(true);
  });

  it('answers like the anchored regular expression on random patterns and texts', () => {
    const chars = fc.constantFrom('a', 'b', '*', '.', '\n');
    fc.assert(
      fc.property(
        fc.string({ unit: chars, maxLength: 8 }),
        fc.string({ unit: fc.constantFrom('a', 'b', '.', '\n', '*'), maxLength: 12 }),
        (pattern, text) => {
          expect(new WildcardPattern(pattern).matches(text)).toBe(reference(pattern, text));
        },
      ),
      { seed: 8, numRuns: 5000 },
    );
  });

  it('takes steps linear in text and pattern for hostile patterns (ten stars on a long value was a minute as a regex)', () => {
    const text = 'a'.repeat(100_000);
    for (const pattern of [
      '*********!',
      '*a*a*a*a*a*a*a*a*a*a*!',
      `*${'a'.repeat(200)}b*`,
      `${'*a'.repeat(128)}`,
      `*${'ab'.repeat(100)}*!`,
    ]) {
      const { steps: n } = steps(pattern, text);
      expect(n, pattern).toBeLessThanOrEqual(3 * (text.length + pattern.length));
    }
    const periodic = 'ab'.repeat(50_000);
    const { result, steps: n } = steps(`*${'ab'.repeat(100)}a*b*!`, periodic);
    expect(result).toBe(false);
    expect(n).toBeLessThanOrEqual(3 * (periodic.length + 300));
  });
});

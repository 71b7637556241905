// The country a call is priced by: longest calling code, NANP split by area code.
import { describe, expect, it } from 'vitest';
import { countryOfNumber } from '../../src/lib/phone-country.js';
import { defaultVoiceRates } from '../../src/modules/billing/data/voice-pricing.js';

describe('countryOfNumber', () => {
  it.each([
    ['+14155550123', 'US'],
    ['+18005550123', 'US'],
    ['+14165550123', 'CA'],
    ['+16045550123', 'CA'],
    // NANP members priced apart (Caribbean, US territories) and premium-rate 900 numbers: never the US rate.
    ['+18765550123', 'JM'],
    ['+18095550123', 'DO'],
    ['+12425550123', 'BS'],
    ['+17875550123', 'PR'],
    ['+19005550123', null],
    ['+442071234567', 'GB'],
    ['+447700900123', 'JE'],
    ['+441481234567', 'GG'],
    ['+33123456789', 'FR'],
    ['+353123456789', 'IE'],
    ['+35812345678', 'FI'],
    ['+85212345678', 'HK'],
    ['+97212345678', 'IL'],
    ['+79995550123', null],
    ['+88212345678', null],
    ['14155550123', null],
    ['+1415', null],
  ])('%s → %s', (number, country) => {
    expect(countryOfNumber(number)).toBe(country);
  });

  it('knows the calling code of every country the built-in voice rates price', () => {
    const examples: Record<string, string> = {};
    for (const { country } of defaultVoiceRates) examples[country] = country;
    const found = new Set<string>();
    for (let code = 1; code < 1000; code++) {
      const c = countryOfNumber(`+${code}${'2'.repeat(9)}`);
      if (c) found.add(c);
    }
    expect(Object.keys(examples).filter((c) => !found.has(c))).toEqual([]);
  });
});

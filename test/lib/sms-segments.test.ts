// SMS segment counting (3GPP TS 23.038/23.040), what carriers charge for.
import { describe, expect, it } from 'vitest';
import { countSmsSegments } from '../../src/lib/sms-segments.js';
import { smsPriceCents } from '../../src/modules/telephony/sms-service.js';

describe('countSmsSegments', () => {
  it.each([
    ['', 'GSM-7', 1],
    ['a'.repeat(160), 'GSM-7', 1],
    ['a'.repeat(161), 'GSM-7', 2],
    ['a'.repeat(306), 'GSM-7', 2],
    ['a'.repeat(307), 'GSM-7', 3],
    // Extension characters take two septets: 80 € are 160 septets (one segment), 81 are two.
    ['€'.repeat(80), 'GSM-7', 1],
    ['€'.repeat(81), 'GSM-7', 2],
    // An escape pair is never split: 152 a + € does not fit 153 septets in the first part.
    [`${'a'.repeat(152)}€${'a'.repeat(10)}`, 'GSM-7', 2],
    [`${'a'.repeat(152)}€${'a'.repeat(152)}`, 'GSM-7', 3],
    ['é'.repeat(160), 'GSM-7', 1],
    ['ж'.repeat(70), 'UCS-2', 1],
    ['ж'.repeat(71), 'UCS-2', 2],
    ['ж'.repeat(134), 'UCS-2', 2],
    ['ж'.repeat(135), 'UCS-2', 3],
    // One character outside GSM-7 makes the whole body UCS-2.
    [`${'a'.repeat(69)}ж`, 'UCS-2', 1],
    [`${'a'.repeat(70)}ж`, 'UCS-2', 2],
    // An emoji is two UTF-16 units and never split: 35 fit one segment; 33 + 1 fill 67 units less one.
    ['😀'.repeat(35), 'UCS-2', 1],
    ['😀'.repeat(36), 'UCS-2', 2],
    [`${'a'.repeat(66)}😀`, 'UCS-2', 1],
    [`${'a'.repeat(66)}😀${'a'.repeat(10)}`, 'UCS-2', 2],
  ])('%#: %j… is %s in %i segment(s)', (body, encoding, segments) => {
    expect(countSmsSegments(body)).toEqual({ encoding, segments });
  });

  it('prices per segment, rounded up to the next cent', () => {
    expect(smsPriceCents('hi', 79)).toEqual({ segments: 1, cents: 1 });
    expect(smsPriceCents('a'.repeat(459), 79)).toEqual({ segments: 3, cents: 3 }); // 2.37 → 3
    expect(smsPriceCents('a'.repeat(1600), 79)).toEqual({ segments: 11, cents: 9 }); // 8.69 → 9
    expect(smsPriceCents('hi', 200)).toEqual({ segments: 1, cents: 2 });
  });
});

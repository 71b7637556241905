// How many SMS segments a body is sent as (3GPP TS 23.038 / 23.040), which is
// what carriers and Twilio charge for. A body written entirely in the GSM 7-bit
// alphabet takes 160 characters in one segment, 153 per segment when split
// (the rest of each segment is the concatenation header); the extension
// characters (^{}\[~]|€ and form feed) take two. Anything else is sent as
// UCS-2: 70 UTF-16 units in one segment, 67 when split. A segment never ends
// between the two halves of an extension character or of a surrogate pair.

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENDED = '\f^{}\\[~]|€';
const basic = new Set(GSM_BASIC);
const extended = new Set(GSM_EXTENDED);

export interface SmsSegments {
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
}

/** Segments of `body` (at least 1, also for an empty body). */
export function countSmsSegments(body: string): SmsSegments {
  const chars = [...body];
  if (chars.every((c) => basic.has(c) || extended.has(c))) {
    const sizes = chars.map((c) => (extended.has(c) ? 2 : 1));
    return { encoding: 'GSM-7', segments: pack(sizes, 160, 153) };
  }
  // UCS-2 counts UTF-16 units: a character outside the BMP (an emoji) is two.
  return {
    encoding: 'UCS-2',
    segments: pack(
      chars.map((c) => c.length),
      70,
      67,
    ),
  };
}

/** Segments needed for indivisible units of `sizes`: one if all fit in `single`, else greedy `multi`-sized ones. */
function pack(sizes: number[], single: number, multi: number): number {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= single) return 1;
  let segments = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > multi) {
      segments += 1;
      used = 0;
    }
    used += size;
  }
  return segments;
}

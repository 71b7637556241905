// The country of an E.164 number, for pricing calls (DESIGN "Money for calls
// and SMS"). Country calling codes form a prefix code, so the longest code a
// number starts with names its country. Only countries that may be priced need
// an entry: a number whose country is unknown here is unpriced and refused.
// The North American Numbering Plan (+1) is split by area code, because its
// Caribbean members and US premium-rate 900 numbers cost far more than the US
// or Canada and are the classic toll-fraud destinations.

const CODES: Record<string, string> = {
  '20': 'EG',
  '27': 'ZA',
  '30': 'GR',
  '31': 'NL',
  '32': 'BE',
  '33': 'FR',
  '34': 'ES',
  '36': 'HU',
  '39': 'IT',
  '40': 'RO',
  '41': 'CH',
  '43': 'AT',
  '44': 'GB',
  '45': 'DK',
  '46': 'SE',
  '47': 'NO',
  '48': 'PL',
  '49': 'DE',
  '51': 'PE',
  '52': 'MX',
  '54': 'AR',
  '55': 'BR',
  '56': 'CL',
  '57': 'CO',
  '58': 'VE',
  '60': 'MY',
  '61': 'AU',
  '62': 'ID',
  '63': 'PH',
  '64': 'NZ',
  '65': 'SG',
  '66': 'TH',
  '81': 'JP',
  '82': 'KR',
  '84': 'VN',
  '86': 'CN',
  '90': 'TR',
  '91': 'IN',
  '92': 'PK',
  '351': 'PT',
  '352': 'LU',
  '353': 'IE',
  '354': 'IS',
  '358': 'FI',
  '420': 'CZ',
  '421': 'SK',
  '852': 'HK',
  '853': 'MO',
  '886': 'TW',
  '971': 'AE',
  '972': 'IL',
  '966': 'SA',
  // Crown dependencies share +44 but are priced apart (and are premium destinations).
  '441481': 'GG',
  '441534': 'JE',
  '441624': 'IM',
  '447781': 'GG',
  '447839': 'GG',
  '447911': 'GG',
  '447700': 'JE',
  '447797': 'JE',
  '447829': 'JE',
  '447624': 'IM',
  '447924': 'IM',
};
const LONGEST = Math.max(...Object.keys(CODES).map((c) => c.length));

const CANADA = new Set(
  '204 226 236 249 250 257 263 289 306 343 354 365 367 368 382 387 403 416 418 428 431 437 438 450 460 468 474 506 514 519 548 579 581 584 587 600 604 613 639 647 672 683 705 709 742 753 778 780 782 807 819 825 867 873 879 902 905 942'.split(
    ' ',
  ),
);
/** NANP members other than the US and Canada, by area code (US territories included: they are priced apart). */
const NANP_OTHERS: Record<string, string> = {
  '242': 'BS',
  '246': 'BB',
  '264': 'AI',
  '268': 'AG',
  '284': 'VG',
  '340': 'VI',
  '345': 'KY',
  '441': 'BM',
  '473': 'GD',
  '649': 'TC',
  '658': 'JM',
  '876': 'JM',
  '664': 'MS',
  '670': 'MP',
  '671': 'GU',
  '684': 'AS',
  '721': 'SX',
  '758': 'LC',
  '767': 'DM',
  '784': 'VC',
  '787': 'PR',
  '939': 'PR',
  '809': 'DO',
  '829': 'DO',
  '849': 'DO',
  '868': 'TT',
  '869': 'KN',
};
/** Area codes that are premium-rate services, not a place: never priced. */
const NANP_PREMIUM = new Set(['900', '976']);

/** ISO 3166-1 alpha-2 country of an E.164 number (`+14155550123` → `US`); null when unknown or not a place. */
export function countryOfNumber(e164: string): string | null {
  if (!/^\+[1-9]\d{6,14}$/.test(e164)) return null;
  const digits = e164.slice(1);
  if (digits.startsWith('1')) {
    const area = digits.slice(1, 4);
    if (NANP_PREMIUM.has(area)) return null;
    return NANP_OTHERS[area] ?? (CANADA.has(area) ? 'CA' : 'US');
  }
  for (let len = Math.min(LONGEST, digits.length - 1); len >= 1; len--) {
    const country = CODES[digits.slice(0, len)];
    if (country) return country;
  }
  return null;
}

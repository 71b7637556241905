// Monthly number prices, per country and number type, in US cents (DESIGN
// "Telephony": price.amount comes from this data). Shaped after Twilio's
// published list prices. A country or type missing here is not offered, even
// when the provider has numbers there: the service cannot price them.
import type { NumberType } from '../../providers/telephony/interface.js';

export interface CountryPricing {
  name: string;
  monthlyCents: Partial<Record<NumberType, number>>;
}

export const NUMBER_CURRENCY = 'usd';

export const NUMBER_PRICING: Record<string, CountryPricing> = {
  US: { name: 'United States', monthlyCents: { local: 115, tollFree: 215 } },
  CA: { name: 'Canada', monthlyCents: { local: 115, tollFree: 215 } },
  GB: { name: 'United Kingdom', monthlyCents: { local: 115, mobile: 115, tollFree: 215 } },
  DE: { name: 'Germany', monthlyCents: { local: 115, mobile: 1000 } },
  AU: { name: 'Australia', monthlyCents: { local: 450, mobile: 650 } },
  FR: { name: 'France', monthlyCents: { local: 200, mobile: 400 } },
  IE: { name: 'Ireland', monthlyCents: { local: 200, mobile: 400 } },
  NL: { name: 'Netherlands', monthlyCents: { local: 400, mobile: 400 } },
  SE: { name: 'Sweden', monthlyCents: { local: 300, mobile: 300 } },
  ES: { name: 'Spain', monthlyCents: { local: 250, mobile: 1500 } },
};

export function monthlyCentsOf(country: string, type: NumberType): number | null {
  return NUMBER_PRICING[country]?.monthlyCents[type] ?? null;
}

/** Cents as the API shows money: `{ amount: 1.15, currency: "usd" }`. */
export const money = (cents: number) => ({ amount: cents / 100, currency: NUMBER_CURRENCY });

// Built-in per-minute voice rates (VOICE_PRICING_FILE replaces them), in
// ten-thousandths of a US dollar so every rate is a whole number: 140 is
// $0.0140 a minute. Inbound is a local number receiving; outbound is a call to
// a mobile or landline in that country (the higher of the two).

/** Per-minute rates in ten-thousandths of a US dollar. */
export interface VoiceRateDefinition {
  country: string;
  name: string;
  inbound: number;
  outbound: number;
}

export const defaultVoiceRates: VoiceRateDefinition[] = [
  { country: 'US', name: 'United States', inbound: 85, outbound: 140 },
  { country: 'CA', name: 'Canada', inbound: 85, outbound: 140 },
  { country: 'GB', name: 'United Kingdom', inbound: 100, outbound: 240 },
  { country: 'IE', name: 'Ireland', inbound: 100, outbound: 350 },
  { country: 'DE', name: 'Germany', inbound: 100, outbound: 580 },
  { country: 'FR', name: 'France', inbound: 100, outbound: 420 },
  { country: 'ES', name: 'Spain', inbound: 100, outbound: 400 },
  { country: 'IT', name: 'Italy', inbound: 100, outbound: 450 },
  { country: 'NL', name: 'Netherlands', inbound: 100, outbound: 650 },
  { country: 'BE', name: 'Belgium', inbound: 100, outbound: 700 },
  { country: 'CH', name: 'Switzerland', inbound: 150, outbound: 850 },
  { country: 'AT', name: 'Austria', inbound: 100, outbound: 800 },
  { country: 'SE', name: 'Sweden', inbound: 100, outbound: 420 },
  { country: 'NO', name: 'Norway', inbound: 100, outbound: 380 },
  { country: 'DK', name: 'Denmark', inbound: 100, outbound: 420 },
  { country: 'FI', name: 'Finland', inbound: 100, outbound: 950 },
  { country: 'PL', name: 'Poland', inbound: 100, outbound: 450 },
  { country: 'PT', name: 'Portugal', inbound: 100, outbound: 480 },
  { country: 'CZ', name: 'Czech Republic', inbound: 100, outbound: 550 },
  { country: 'GR', name: 'Greece', inbound: 100, outbound: 600 },
  { country: 'AU', name: 'Australia', inbound: 100, outbound: 520 },
  { country: 'NZ', name: 'New Zealand', inbound: 100, outbound: 600 },
  { country: 'JP', name: 'Japan', inbound: 200, outbound: 1_100 },
  { country: 'KR', name: 'South Korea', inbound: 200, outbound: 600 },
  { country: 'SG', name: 'Singapore', inbound: 150, outbound: 400 },
  { country: 'HK', name: 'Hong Kong', inbound: 150, outbound: 350 },
  { country: 'IN', name: 'India', inbound: 200, outbound: 450 },
  { country: 'IL', name: 'Israel', inbound: 150, outbound: 450 },
  { country: 'AE', name: 'United Arab Emirates', inbound: 300, outbound: 1_600 },
  { country: 'ZA', name: 'South Africa', inbound: 150, outbound: 1_200 },
  { country: 'MX', name: 'Mexico', inbound: 100, outbound: 380 },
  { country: 'BR', name: 'Brazil', inbound: 150, outbound: 500 },
  { country: 'AR', name: 'Argentina', inbound: 150, outbound: 650 },
  { country: 'CL', name: 'Chile', inbound: 150, outbound: 500 },
  { country: 'CO', name: 'Colombia', inbound: 150, outbound: 450 },
  { country: 'PH', name: 'Philippines', inbound: 200, outbound: 1_500 },
];

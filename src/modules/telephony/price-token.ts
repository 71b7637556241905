// The `price.jwt` of a search result (spec 2.10, DESIGN "Telephony"): a
// service token (data/service-tokens.ts) bound to the caller, naming what is
// bought and its monthly price, valid 15 minutes. Purchase spends its `jti`
// once.
import { AppError } from '../../http/errors.js';
import type { AddressRequirement, Capabilities, NumberType } from '../../providers/telephony/interface.js';
import type { ServiceTokens, TokenRefusal } from '../data/service-tokens.js';

export const PRICE_TOKEN_TTL_SECONDS = 15 * 60;
const PURPOSE = 'phone-number-price';

export interface PriceClaims {
  userId: string;
  jti: string;
  /** Epoch ms. */
  expiresAt: number;
  provider: string;
  phoneNumber: string;
  country: string;
  type: NumberType;
  capabilities: Capabilities;
  addressRequirements: AddressRequirement;
  monthlyCents: number;
  currency: string;
}

const REFUSALS: Record<TokenRefusal, string> = {
  malformed: 'not a compact JWS',
  foreign: 'not signed by this service',
  expired: 'expired',
  invalid: 'bad signature or claims',
  'wrong-use': 'not a price token',
  // Another user's token reads as not valid, without saying whose it is.
  'other-user': 'issued to another account',
};
const invalid = (why: TokenRefusal) =>
  new AppError('invalid_token', `the price jwt is not valid: ${REFUSALS[why]}; search again for a fresh one`);

export class PriceTokens {
  constructor(private readonly tokens: ServiceTokens) {}

  async sign(claims: Omit<PriceClaims, 'jti' | 'expiresAt'>): Promise<string> {
    const { userId, ...priced } = claims;
    return (await this.tokens.sign(PURPOSE, userId, { ...priced }, PRICE_TOKEN_TTL_SECONDS)).token;
  }

  /** The claims of a genuine, unexpired token issued to `userId`; 400 invalid_token otherwise. */
  async verify(token: string, userId: string): Promise<PriceClaims> {
    const { jti, expiresAt, claims: payload } = await this.tokens.verify(token, PURPOSE, userId, invalid);
    return {
      userId,
      jti,
      expiresAt,
      provider: String(payload.provider),
      phoneNumber: String(payload.phoneNumber),
      country: String(payload.country),
      type: payload.type as NumberType,
      capabilities: payload.capabilities as Capabilities,
      addressRequirements: payload.addressRequirements as AddressRequirement,
      monthlyCents: Number(payload.monthlyCents),
      currency: String(payload.currency),
    };
  }
}

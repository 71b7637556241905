// The `price.jwt` of a search result (spec 2.10, DESIGN "Telephony"): a compact
// JWS (ES256) signed with the service's current key pair (`kid` = its server
// name, so a rotated key still verifies its tokens), bound to the caller
// (`sub`), naming what is bought and its monthly price, valid 15 minutes.
// Purchase spends its `jti` once.
import { SignJWT, decodeProtectedHeader, jwtVerify } from 'jose';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AddressRequirement, Capabilities, NumberType } from '../../providers/telephony/interface.js';
import type { ServiceKeyring } from '../data/server-keys.js';

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

const invalid = (why: string) => new AppError('invalid_token', `the price jwt is not valid: ${why}; search again for a fresh one`);

export class PriceTokens {
  constructor(
    private readonly keyring: ServiceKeyring,
    private readonly clock: Clock,
  ) {}

  async sign(claims: Omit<PriceClaims, 'jti' | 'expiresAt'>): Promise<string> {
    const server = await this.keyring.current();
    const key = await this.keyring.getServicePrivateKey(server.current);
    if (!key) throw new Error(`service key ${server.current} has no private key`);
    const iat = Math.floor(this.clock.now() / 1000);
    return new SignJWT({
      use: PURPOSE,
      provider: claims.provider,
      phoneNumber: claims.phoneNumber,
      country: claims.country,
      type: claims.type,
      capabilities: claims.capabilities,
      addressRequirements: claims.addressRequirements,
      monthlyCents: claims.monthlyCents,
      currency: claims.currency,
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: server.current })
      .setSubject(claims.userId)
      .setJti(newId())
      .setIssuedAt(iat)
      .setExpirationTime(iat + PRICE_TOKEN_TTL_SECONDS)
      .sign(key);
  }

  /** The claims of a genuine, unexpired token issued to `userId`; 400 invalid_token otherwise. */
  async verify(token: string, userId: string): Promise<PriceClaims> {
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw invalid('not a compact JWS');
    }
    const key = typeof kid === 'string' && (await this.keyring.isServiceServer(kid)) ? await this.keyring.getServicePublicKey(kid) : null;
    if (!key) throw invalid('not signed by this service');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, { algorithms: ['ES256'], currentDate: new Date(this.clock.now()), requiredClaims: ['sub', 'jti', 'exp'] }));
    } catch (err) {
      throw invalid((err as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'bad signature or claims');
    }
    if (payload.use !== PURPOSE) throw invalid('not a price token');
    // Another user's token reads as not valid, without saying whose it is.
    if (payload.sub !== userId) throw invalid('issued to another account');
    return {
      userId,
      jti: String(payload.jti),
      expiresAt: Number(payload.exp) * 1000,
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

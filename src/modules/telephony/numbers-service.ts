// Phone numbers and addresses (spec 4.11, 2.10–2.12; DESIGN "Telephony"):
// search with signed prices, purchase in the spec's order, list, rename and
// delete (subscription cancelled first, then the number released).
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import type {
  AddressInput,
  Capabilities,
  NumberType,
  TelephonyProvider,
  TelephonyProviders,
} from '../../providers/telephony/interface.js';
import type { BillingAccount } from '../billing/account.js';
import { NUMBER_CURRENCY, NUMBER_PRICING, money, monthlyCentsOf } from './pricing.js';
import type { PriceClaims, PriceTokens } from './price-token.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import type { TelephonyStore } from './store.js';
import type { PhoneNumbersTable } from './tables.js';

export interface SearchEntry {
  name: string;
  phoneNumber: string;
  country: string;
  type: NumberType;
  locality: string | null;
  region: string | null;
  capabilities: Capabilities;
  addressRequirements: string;
  price: { currency: string; amount: number; jwt: string };
}

export interface PhoneNumberView {
  id: string;
  phoneNumber: string;
  name: string;
  description: string | null;
  type: string;
  numberType: NumberType;
  country: string;
  capabilities: Capabilities;
  provider: string;
  monthlyPrice: { amount: number; currency: string };
  inboundConfigurationId: string | null;
  status: string;
  createdAt: string;
  updatedAt: string;
}

export interface PurchaseInput {
  jwt: string;
  name?: string;
  description?: string;
  addressSid?: string;
}

export function toPhoneNumberView(row: PhoneNumbersTable): PhoneNumberView {
  return {
    id: row.id,
    phoneNumber: row.phone_number,
    name: row.name,
    description: row.description,
    type: row.type,
    numberType: row.number_type as NumberType,
    country: row.country,
    capabilities: JSON.parse(row.capabilities) as Capabilities,
    provider: row.provider,
    monthlyPrice: { amount: Number(row.monthly_cents) / 100, currency: row.currency },
    inboundConfigurationId: row.inbound_configuration_id,
    status: row.status,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** Wraps a failure of billing or the provider as 502, keeping AppErrors that already say what happened. */
const asProviderError = (err: unknown, what: string): AppError =>
  err instanceof AppError && err.status >= 500
    ? err
    : new AppError('provider_error', `${what}: ${(err as Error).message}`);

export class PhoneNumberService {
  constructor(
    private readonly store: TelephonyStore,
    private readonly providers: TelephonyProviders,
    private readonly prices: PriceTokens,
    private readonly singleUse: SingleUseTokens,
    private readonly billing: BillingAccount,
    private readonly clock: Clock,
  ) {}

  providerSlugs(): string[] {
    return this.providers.list.map((p) => p.slug);
  }

  /** Countries where the provider has numbers that the pricing data prices, with those types. */
  async countries(slug: string): Promise<Array<{ country: string; name: string; types: NumberType[] }>> {
    const offered = await this.provider(slug).listCountries();
    return offered
      .map(({ country, types }) => ({
        country,
        name: NUMBER_PRICING[country]?.name ?? country,
        types: types.filter((t) => monthlyCentsOf(country, t) !== null),
      }))
      .filter((c) => c.types.length > 0)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async search(
    userId: string,
    slug: string,
    query: { country: string; type: NumberType; contains?: string; limit: number },
  ): Promise<SearchEntry[]> {
    const provider = this.provider(slug);
    const country = query.country.toUpperCase();
    const monthlyCents = monthlyCentsOf(country, query.type);
    if (monthlyCents === null) return [];
    // Ask for a few more: numbers someone here already owns are left out.
    const found = await provider.searchNumbers({
      country,
      type: query.type,
      contains: query.contains,
      limit: Math.min(query.limit + 20, 100),
    });
    const owned = await this.store.ownedNumbers(
      slug,
      found.map((n) => n.phoneNumber),
    );
    const available = found.filter((n) => !owned.has(n.phoneNumber)).slice(0, query.limit);
    return Promise.all(
      available.map(async (n) => ({
        name: n.friendlyName,
        phoneNumber: n.phoneNumber,
        country: n.country,
        type: n.type,
        locality: n.locality,
        region: n.region,
        capabilities: n.capabilities,
        addressRequirements: n.addressRequirements,
        price: {
          ...money(monthlyCents),
          jwt: await this.prices.sign({
            userId,
            provider: slug,
            phoneNumber: n.phoneNumber,
            country: n.country,
            type: n.type,
            capabilities: n.capabilities,
            addressRequirements: n.addressRequirements,
            monthlyCents,
            currency: NUMBER_CURRENCY,
          }),
        },
      })),
    );
  }

  /** Registers an address with the provider (default: the real one when configured) and remembers whose it is. */
  async createAddress(userId: string, input: AddressInput & { provider?: string }): Promise<{ addressSid: string }> {
    const provider = input.provider
      ? this.provider(input.provider)
      : (this.providers.list.find((p) => !p.sandbox) ?? this.providers.list[0]);
    const address: AddressInput = { ...input, isoCountry: input.isoCountry.toUpperCase() };
    delete (address as { provider?: string }).provider;
    const { addressSid } = await provider.createAddress(address);
    await this.store.insertAddress({
      id: addressSid,
      user_id: userId,
      provider: provider.slug,
      iso_country: address.isoCountry,
      fields: JSON.stringify(address),
      created_at: this.clock.now(),
    });
    return { addressSid };
  }

  /**
   * Spec 4.11's order: (1) a card on file, else 409 with a checkout URL;
   * (2) reserve the number with the provider; (3) start its subscription,
   * releasing the number again if that fails (502); (4) the new id.
   */
  async purchase(userId: string, input: PurchaseInput): Promise<{ id: string }> {
    const claims = await this.prices.verify(input.jwt, userId);
    const provider = this.providers.get(claims.provider);
    if (!provider)
      throw new AppError(
        'invalid_token',
        `the price jwt names provider "${claims.provider}", which this server no longer offers; search again`,
      );

    if (!(await this.billing.hasCard(userId))) {
      throw new AppError(
        'payment_method_required',
        'buying a number needs a card on file: open checkoutUrl, add a card, then retry',
        {
          checkoutUrl: await this.billing.cardCheckoutUrl(userId),
        },
      );
    }
    const addressSid = await this.checkAddress(userId, claims, input.addressSid);

    if (!(await this.singleUse.spend('phone-price', claims.jti, claims.expiresAt))) {
      throw new AppError('invalid_token', 'the price jwt was already used for a purchase; search again');
    }
    const now = this.clock.now();
    const id = newId(now);
    const inserted = await this.store.insertNumber({
      id,
      user_id: userId,
      provider: provider.slug,
      provider_sid: null,
      phone_number: claims.phoneNumber,
      name: (input.name ?? '').trim() || claims.phoneNumber,
      description: input.description ?? null,
      type: claims.capabilities.voice ? 'both' : 'outbound',
      number_type: claims.type,
      country: claims.country,
      capabilities: JSON.stringify(claims.capabilities),
      monthly_cents: claims.monthlyCents,
      currency: claims.currency,
      address_sid: addressSid,
      subscription_id: null,
      inbound_configuration_id: null,
      status: 'pending',
      created_at: now,
      updated_at: now,
    });
    if (!inserted) {
      await this.singleUse.restore('phone-price', claims.jti);
      throw new AppError('conflict', `the number ${claims.phoneNumber} already has an owner; search again`);
    }

    let sid: string;
    try {
      ({ sid } = await provider.buyNumber({
        phoneNumber: claims.phoneNumber,
        addressSid: addressSid ?? undefined,
        friendlyName: `workspace:${id}`,
      }));
    } catch (err) {
      await this.store.deleteNumber(userId, id);
      await this.singleUse.restore('phone-price', claims.jti);
      throw err;
    }
    await this.store.updateNumber(userId, id, { provider_sid: sid, updated_at: this.clock.now() });

    let subscriptionId: string;
    try {
      ({ subscriptionId } = await this.billing.startSubscription(userId, {
        ref: `phone-number:${id}`,
        description: `Phone number ${claims.phoneNumber}`,
        monthlyCents: claims.monthlyCents,
      }));
    } catch (err) {
      // The card went away since step (1): the same 409 as there; anything else is the provider's failure (502).
      const failure =
        err instanceof AppError && err.code === 'payment_method_required'
          ? new AppError('payment_method_required', err.message, {
              checkoutUrl: err.extra?.url ?? err.extra?.checkoutUrl ?? (await this.billing.cardCheckoutUrl(userId)),
            })
          : asProviderError(err, 'the monthly subscription for the number could not be started');
      try {
        await provider.releaseNumber(sid);
      } catch {
        // Not released: the record stays, without a subscription, as `releasing`; DELETE retries the release.
        await this.store.updateNumber(userId, id, { status: 'releasing', updated_at: this.clock.now() });
        throw failure;
      }
      await this.store.deleteNumber(userId, id);
      await this.singleUse.restore('phone-price', claims.jti);
      throw failure;
    }
    await this.store.updateNumber(userId, id, {
      subscription_id: subscriptionId,
      status: 'active',
      updated_at: this.clock.now(),
    });
    return { id };
  }

  async list(userId: string): Promise<PhoneNumberView[]> {
    return (await this.store.listNumbers(userId)).map(toPhoneNumberView);
  }

  async get(userId: string, id: string): Promise<PhoneNumberView> {
    const row = await this.store.findNumber(userId, id);
    if (!row) throw notFound('phone number');
    return toPhoneNumberView(row);
  }

  async update(
    userId: string,
    id: string,
    changes: { name?: string; description?: string | null },
  ): Promise<PhoneNumberView> {
    const set: Partial<PhoneNumbersTable> = { updated_at: this.clock.now() };
    if (changes.name !== undefined) {
      if (!changes.name.trim()) throw invalidInput('name must not be empty');
      set.name = changes.name.trim();
    }
    if (changes.description !== undefined) set.description = changes.description;
    const row = await this.store.updateNumber(userId, id, set);
    if (!row) throw notFound('phone number');
    return toPhoneNumberView(row);
  }

  /**
   * Follows the subscription that pays for a number (billing announces it on
   * every provider event about it): unpaid (past_due, unpaid, canceled, …)
   * suspends an active number, which then sends no SMS and places or takes no
   * calls; paid again makes a suspended number active. Idempotent: only the
   * status it moves from is touched. Refs other than `phone-number:<id>` are not ours.
   */
  async followSubscription(change: { userId: string; ref: string; paid: boolean }): Promise<void> {
    const match = /^phone-number:(.+)$/.exec(change.ref);
    if (!match) return;
    const [from, to] = change.paid ? (['suspended', 'active'] as const) : (['active', 'suspended'] as const);
    await this.store.moveNumberStatus(change.userId, match[1]!, from, to, this.clock.now());
  }

  /** Cancels the subscription (failure: 502, the number stays), then releases the number and forgets it. */
  async delete(userId: string, id: string): Promise<void> {
    const row = await this.store.findNumber(userId, id);
    if (!row) throw notFound('phone number');
    if (row.subscription_id) {
      try {
        await this.billing.cancelSubscription(userId, row.subscription_id);
      } catch (err) {
        throw asProviderError(err, 'the subscription could not be cancelled; the number stays active');
      }
      await this.store.updateNumber(userId, id, { status: 'releasing', updated_at: this.clock.now() });
    }
    if (row.provider_sid) {
      const provider = this.providers.get(row.provider);
      if (!provider)
        throw new AppError(
          'provider_error',
          `provider "${row.provider}" is not configured on this server; the number cannot be released`,
        );
      try {
        await provider.releaseNumber(row.provider_sid);
      } catch (err) {
        await this.store.updateNumber(userId, id, { status: 'releasing', updated_at: this.clock.now() });
        throw asProviderError(
          err,
          'the subscription is cancelled but the provider did not release the number; retry DELETE',
        );
      }
    }
    await this.store.deleteNumber(userId, id);
  }

  /** The address a regulated number needs (DESIGN: 400 without a matching addressSid). */
  private async checkAddress(
    userId: string,
    claims: PriceClaims,
    addressSid: string | undefined,
  ): Promise<string | null> {
    if (addressSid === undefined) {
      if (claims.addressRequirements === 'none') return null;
      throw invalidInput(
        `${claims.phoneNumber} needs a ${claims.addressRequirements === 'local' ? `local address (in ${claims.country})` : `foreign address (outside ${claims.country})`}: create one with PUT /api/phone-numbers/address and send its addressSid`,
      );
    }
    const address = await this.store.findAddress(userId, addressSid);
    if (!address || address.provider !== claims.provider)
      throw invalidInput(`addressSid is not one of your addresses at provider ${claims.provider}`);
    if (claims.addressRequirements === 'local' && address.iso_country !== claims.country)
      throw invalidInput(
        `${claims.phoneNumber} needs an address in ${claims.country}; this address is in ${address.iso_country}`,
      );
    if (claims.addressRequirements === 'foreign' && address.iso_country === claims.country)
      throw invalidInput(`${claims.phoneNumber} needs an address outside ${claims.country}`);
    return address.id;
  }

  private provider(slug: string): TelephonyProvider {
    const provider = this.providers.get(slug);
    if (!provider)
      throw new AppError(
        'provider_not_found',
        `no telephony provider "${slug}" on this server; GET /api/phone-numbers/search lists them`,
      );
    return provider;
  }
}

// A phone number the user owns, written straight into the database (the
// provider's purchase is not what these tests look at): active, voice and SMS
// capable, US local, as the telephony area would have stored it.
import { randomUUID } from 'node:crypto';
import { newId } from '../../src/lib/ids.js';
import type { TestApp } from './app.js';

export interface OwnedNumber {
  id: string;
  phone: string;
  /** The provider's number sid. */
  sid: string;
}

/** A random +1415555XXXX. */
export const randomUsNumber = () => `+1415555${String(1000 + Math.floor(Math.random() * 8999))}`;

export async function insertPhoneNumber(
  t: TestApp,
  userId: string,
  options: {
    provider: 'twilio' | 'sandbox';
    phone?: string;
    sid?: string;
    name?: string;
    voice?: boolean;
    now?: number;
  },
): Promise<OwnedNumber> {
  const now = options.now ?? Date.now();
  const id = newId(now);
  const phone = options.phone ?? randomUsNumber();
  const sid = options.sid ?? `PN${randomUUID().replace(/-/g, '').slice(0, 32)}`;
  const voice = options.voice ?? true;
  await t.database.db
    .insertInto('phone_numbers')
    .values({
      id,
      user_id: userId,
      provider: options.provider,
      provider_sid: sid,
      phone_number: phone,
      name: options.name ?? 'Main',
      description: null,
      type: voice ? 'both' : 'outbound',
      number_type: 'local',
      country: 'US',
      capabilities: JSON.stringify({ voice, sms: true, mms: false }),
      monthly_cents: 115,
      currency: 'usd',
      address_sid: null,
      subscription_id: null,
      inbound_configuration_id: null,
      status: 'active',
      created_at: now,
      updated_at: now,
    })
    .execute();
  return { id, phone, sid };
}

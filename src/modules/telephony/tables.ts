// Telephony's tables: bought numbers, provider addresses, used price tokens,
// inbound configurations and outbound SMS with their status history.

export interface PhoneNumbersTable {
  id: string;
  user_id: string;
  provider: string;
  /** The provider's number sid (PN…); null while the purchase is still running. */
  provider_sid: string | null;
  phone_number: string;
  name: string;
  description: string | null;
  /** `both` (voice-capable) or `outbound` (SMS only). */
  type: string;
  /** local, mobile, tollFree. */
  number_type: string;
  country: string;
  /** JSON { voice, sms, mms }. */
  capabilities: string;
  monthly_cents: number;
  currency: string;
  address_sid: string | null;
  subscription_id: string | null;
  inbound_configuration_id: string | null;
  /** pending (purchase running) · active · suspended (its subscription is unpaid: no SMS, no calls) · releasing (subscription cancelled, release to retry). */
  status: string;
  created_at: number;
  updated_at: number;
}

export interface PhoneAddressesTable {
  /** The provider's address sid (AD…), answered as `addressSid`. */
  id: string;
  user_id: string;
  provider: string;
  iso_country: string;
  /** JSON of the fields sent (customerName, street, city, region, postalCode, …). */
  fields: string;
  created_at: number;
}

export interface InboundConfigurationsTable {
  id: string;
  user_id: string;
  name: string;
  description: string | null;
  /** JSON references (DESIGN "Telephony"). */
  agent: string;
  source: string;
  human_agents: string;
  knowledge_base_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface SmsMessagesTable {
  id: string;
  user_id: string;
  phone_number_id: string;
  provider: string;
  provider_sid: string | null;
  from_number: string;
  to_number: string;
  body: string;
  /** The furthest status reached (see STATUS_RANK in sms-service.ts). */
  status: string;
  error_code: string | null;
  /** Segments the body is sent as (160 GSM-7 / 70 UCS-2 characters, 153 / 67 when split). */
  segments?: number | null;
  /** The price held for the message (SMS_PRICE_USD per segment, rounded up to a cent); null when not charged. */
  price_cents?: number | null;
  /** held → charged | refunded; null when nothing was held. */
  charge_state?: string | null;
  created_at: number;
  updated_at: number;
}

export interface SmsStatusesTable {
  message_id: string;
  status: string;
  error_code: string | null;
  /** Where the status came from: `create` (the provider's answer) or `callback`. */
  source: string;
  at: number;
}

export interface TelephonyTables {
  phone_numbers: PhoneNumbersTable;
  phone_addresses: PhoneAddressesTable;
  inbound_configurations: InboundConfigurationsTable;
  sms_messages: SmsMessagesTable;
  sms_statuses: SmsStatusesTable;
}

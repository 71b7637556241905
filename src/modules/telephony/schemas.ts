// TypeBox schemas of the telephony routes (spec 2.10–2.13, 4.11–4.13).
import { Type } from 'typebox';

const SMS_ID_EXAMPLE = '0193a5c2-7d1e-7b42-9f10-3c5d2e8a4b61';
export const INBOUND_ID_EXAMPLE = '0193a5c2-6a4d-7e19-b3c5-2d8f1e7a9c44';
export const PHONE_NUMBER_ID_EXAMPLE = '0193a5c2-5e0b-7c3a-8d21-4f6a9b2c7e10';
const PRICE_JWT_EXAMPLE =
  'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6IndvcmtzcGFjZS0xIn0.eyJwaG9uZU51bWJlciI6IisxNDE1NTU1MDEwMCJ9.3kP9xQ…';

export const Capabilities = Type.Object({ voice: Type.Boolean(), sms: Type.Boolean(), mms: Type.Boolean() });
export const NumberTypeSchema = Type.Union([Type.Literal('local'), Type.Literal('mobile'), Type.Literal('tollFree')]);
const Money = Type.Object({
  amount: Type.Number({ description: 'In currency units' }),
  currency: Type.String({ description: 'Lower-case ISO 4217' }),
});

export const ProviderParams = Type.Object({
  provider: Type.String({
    minLength: 1,
    maxLength: 40,
    description: 'A slug from GET /api/phone-numbers/search',
    examples: ['sandbox'],
  }),
});

export const ProviderList = Type.Array(Type.String(), {
  description: 'Telephony provider slugs',
  examples: [['twilio', 'sandbox']],
});

export const CountryList = Type.Array(
  Type.Object({
    country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
    name: Type.String(),
    types: Type.Array(NumberTypeSchema),
  }),
  { examples: [[{ country: 'US', name: 'United States', types: ['local', 'tollFree'] }]] },
);

export const SearchQuery = Type.Object({
  country: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2 country code', examples: ['US'] }),
  type: Type.Optional(NumberTypeSchema),
  contains: Type.Optional(Type.String({ pattern: '^[0-9]{1,10}$', description: 'Digits the number must contain' })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 50, default: 20, description: 'At most this many numbers (default 20)' }),
  ),
});

export const SearchEntry = Type.Object({
  name: Type.String({ description: "The provider's display name of the number" }),
  phoneNumber: Type.String({ description: 'E.164' }),
  country: Type.String(),
  type: NumberTypeSchema,
  locality: Type.Union([Type.String(), Type.Null()]),
  region: Type.Union([Type.String(), Type.Null()]),
  capabilities: Capabilities,
  addressRequirements: Type.Union([Type.Literal('none'), Type.Literal('local'), Type.Literal('foreign')]),
  price: Type.Object({
    currency: Type.String(),
    amount: Type.Number({ description: 'Monthly price in currency units' }),
    jwt: Type.String({ description: 'Signed offer, bound to you, valid 15 minutes, accepted by one purchase' }),
  }),
});

export const SearchResult = Type.Array(SearchEntry, {
  examples: [
    [
      {
        name: '(415) 555-0100',
        phoneNumber: '+14155550100',
        country: 'US',
        type: 'local',
        locality: 'San Francisco',
        region: 'CA',
        capabilities: { voice: true, sms: true, mms: true },
        addressRequirements: 'none',
        price: { currency: 'usd', amount: 1.15, jwt: PRICE_JWT_EXAMPLE },
      },
    ],
  ],
});

export const AddressBody = Type.Object(
  {
    customerName: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Defaults to your first and last name' }),
    ),
    street: Type.String({ minLength: 1, maxLength: 200 }),
    streetSecondary: Type.Optional(Type.String({ maxLength: 200 })),
    city: Type.String({ minLength: 1, maxLength: 100 }),
    region: Type.String({ minLength: 1, maxLength: 100, description: 'State, province or county' }),
    postalCode: Type.String({ minLength: 1, maxLength: 20 }),
    isoCountry: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2' }),
    friendlyName: Type.Optional(Type.String({ maxLength: 100 })),
    provider: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'Provider slug; default: the real provider when configured, else the sandbox',
      }),
    ),
  },
  {
    examples: [
      {
        customerName: 'Acme Inc.',
        street: '1 Market Street',
        streetSecondary: 'Suite 300',
        city: 'San Francisco',
        region: 'CA',
        postalCode: '94105',
        isoCountry: 'US',
        friendlyName: 'Head office',
      },
    ],
  },
);

export const AddressResult = Type.Object(
  { addressSid: Type.String() },
  { examples: [{ addressSid: 'AD5d3c0f6b0e8a4c1f9a2b7e6d4c3b2a19' }] },
);

export const PurchaseBody = Type.Object(
  {
    jwt: Type.String({ minLength: 1, maxLength: 8192, description: 'price.jwt of a search result' }),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Display name (default: the number)' })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    addressSid: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Needed when addressRequirements is not none' }),
    ),
  },
  { examples: [{ jwt: PRICE_JWT_EXAMPLE, name: 'Support line', description: 'Answers the support queue' }] },
);

export const IdResult = Type.Object({ id: Type.String() }, { examples: [{ id: PHONE_NUMBER_ID_EXAMPLE }] });

export const phoneNumberExample = {
  id: PHONE_NUMBER_ID_EXAMPLE,
  phoneNumber: '+14155550100',
  name: 'Support line',
  description: null,
  type: 'both',
  numberType: 'local' as const,
  country: 'US',
  capabilities: { voice: true, sms: true, mms: true },
  provider: 'sandbox',
  monthlyPrice: { amount: 1.15, currency: 'usd' },
  inboundConfigurationId: null,
  status: 'active',
  createdAt: '2026-11-23T20:00:00.000Z',
  updatedAt: '2026-11-23T20:00:00.000Z',
};

export const PhoneNumber = Type.Object(
  {
    id: Type.String(),
    phoneNumber: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    type: Type.String({
      description: '`both` (takes calls and sends SMS; attaches to inbound configurations) or `outbound` (SMS only)',
    }),
    numberType: NumberTypeSchema,
    country: Type.String(),
    capabilities: Capabilities,
    provider: Type.String(),
    monthlyPrice: Money,
    inboundConfigurationId: Type.Union([Type.String(), Type.Null()]),
    status: Type.String({
      description:
        '`active`; `pending` while a purchase runs; `suspended` while the subscription paying for it is unpaid (no SMS, no calls; active again once paid); `releasing` when the subscription is cancelled but the provider has not released it yet (DELETE again)',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { examples: [phoneNumberExample] },
);

export const PhoneNumberList = Type.Array(PhoneNumber, { examples: [[phoneNumberExample]] });

export const PhoneNumberPatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  },
  { examples: [{ name: 'Support line', description: 'Answers the support queue' }, { description: null }] },
);

const reference = (type: string, what: string) =>
  Type.Object(
    { id: Type.String({ minLength: 1, maxLength: 200 }), type: Type.Literal(type) },
    {
      additionalProperties: true,
      description: `${what}: an object in your \`${type}\` store; further fields are kept as sent`,
    },
  );

export const AgentReference = reference('agents', 'The agent');
export const HumanAgentReference = reference('contacts', 'A human agent');
export const SourceReference = Type.Union(
  [
    Type.Object(
      { type: Type.Literal('campaigns'), id: Type.String({ minLength: 1, maxLength: 200 }) },
      { additionalProperties: true },
    ),
    Type.Object({ type: Type.Literal('manual') }, { additionalProperties: true }),
  ],
  { description: 'An object in your `campaigns` store, or `{ "type": "manual" }`' },
);

const inboundFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  agent: AgentReference,
  source: SourceReference,
  humanAgents: Type.Optional(
    Type.Array(HumanAgentReference, { maxItems: 50, description: 'Duplicates (same id) are removed' }),
  ),
  knowledge_base_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
};

const AGENT_ID_EXAMPLE = '0193a5c2-0000-7000-8000-00000000a001';
const CONTACT_ID_EXAMPLE = '0193a5c2-0000-7000-8000-00000000c001';
const KNOWLEDGE_BASE_ID_EXAMPLE = '0193a5b2-7c1e-7d3f-9a41-5c2b8e6f1a20';

export const InboundBody = Type.Object(inboundFields, {
  examples: [
    {
      name: 'Front desk',
      description: 'Answers the main line during office hours',
      agent: { id: AGENT_ID_EXAMPLE, type: 'agents' },
      source: { type: 'manual' },
      humanAgents: [{ id: CONTACT_ID_EXAMPLE, type: 'contacts' }],
      knowledge_base_id: KNOWLEDGE_BASE_ID_EXAMPLE,
    },
  ],
});
export const InboundPatchBody = Type.Object(
  {
    name: Type.Optional(inboundFields.name),
    description: inboundFields.description,
    source: Type.Optional(SourceReference),
    humanAgents: inboundFields.humanAgents,
    knowledge_base_id: inboundFields.knowledge_base_id,
  },
  { examples: [{ name: 'Front desk (evenings)', humanAgents: [], knowledge_base_id: null }] },
);

export const inboundConfigurationExample = {
  id: INBOUND_ID_EXAMPLE,
  name: 'Front desk',
  description: null,
  agent: { id: AGENT_ID_EXAMPLE, type: 'agents' },
  source: { type: 'manual' },
  humanAgents: [{ id: CONTACT_ID_EXAMPLE, type: 'contacts' }],
  knowledge_base_id: KNOWLEDGE_BASE_ID_EXAMPLE,
  phoneNumberIds: [PHONE_NUMBER_ID_EXAMPLE],
  createdAt: '2026-11-23T20:00:00.000Z',
  updatedAt: '2026-11-23T20:00:00.000Z',
};

export const InboundConfiguration = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    agent: AgentReference,
    source: Type.Unsafe<Record<string, unknown>>(SourceReference),
    humanAgents: Type.Array(HumanAgentReference),
    knowledge_base_id: Type.Union([Type.String(), Type.Null()]),
    phoneNumberIds: Type.Array(Type.String(), { description: 'Numbers attached to this configuration' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { examples: [inboundConfigurationExample] },
);

export const AttachBody = Type.Object(
  {
    action: Type.Union([Type.Literal('attach'), Type.Literal('detach')]),
    phone_number_id: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { examples: [{ action: 'attach', phone_number_id: PHONE_NUMBER_ID_EXAMPLE }] },
);

export const SmsBody = Type.Object(
  {
    phoneNumberId: Type.String({ minLength: 1, maxLength: 200, description: 'One of your numbers that can send SMS' }),
    to: Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164', examples: ['+14155550123'] }),
    body: Type.String({ minLength: 1, maxLength: 1600 }),
  },
  { examples: [{ phoneNumberId: PHONE_NUMBER_ID_EXAMPLE, to: '+14155550123', body: 'Your table is ready' }] },
);

export const smsMessageExample = {
  id: SMS_ID_EXAMPLE,
  phoneNumberId: PHONE_NUMBER_ID_EXAMPLE,
  from: '+14155550100',
  to: '+14155550123',
  body: 'Your table is ready',
  status: 'delivered',
  errorCode: null,
  provider: 'sandbox',
  providerSid: 'SM5d3c0f6b0e8a4c1f9a2b7e6d4c3b2a19',
  statuses: [
    { status: 'queued', errorCode: null, at: '2026-11-23T20:00:00.000Z' },
    { status: 'sent', errorCode: null, at: '2026-11-23T20:00:00.500Z' },
    { status: 'delivered', errorCode: null, at: '2026-11-23T20:00:01.000Z' },
  ],
  segments: 1,
  price: { amount: 0.01, currency: 'usd' as const },
  createdAt: '2026-11-23T20:00:00.000Z',
  updatedAt: '2026-11-23T20:00:01.000Z',
};

export const SmsMessage = Type.Object(
  {
    id: Type.String(),
    phoneNumberId: Type.String(),
    from: Type.String(),
    to: Type.String(),
    body: Type.String(),
    status: Type.String({
      description: "Furthest status reached (Twilio's: queued, sending, sent, delivered, undelivered, failed, …)",
    }),
    errorCode: Type.Union([Type.String(), Type.Null()]),
    provider: Type.String(),
    providerSid: Type.Union([Type.String(), Type.Null()]),
    statuses: Type.Array(
      Type.Object({
        status: Type.String(),
        errorCode: Type.Union([Type.String(), Type.Null()]),
        at: Type.String({ format: 'date-time' }),
      }),
      {
        description: 'Every status in the order they happened, starting with the provider’s answer to the send',
      },
    ),
    segments: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description:
        'Segments the body is sent as: 160 GSM-7 characters (70 for other text, UCS-2) in one, 153 (67) each when split',
    }),
    price: Type.Union([Type.Object({ amount: Type.Number(), currency: Type.Literal('usd') }), Type.Null()], {
      description:
        'SMS_PRICE_USD per segment, rounded up to the next cent: held from your balance at send, kept when the message is sent or delivered, returned when it fails first',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { examples: [smsMessageExample] },
);

export const StatusCallbackBody = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), {
  description: "Twilio's status callback parameters, form-encoded (MessageSid, MessageStatus, ErrorCode, …)",
});

/**
 * How X-Twilio-Signature is checked, for the descriptions of the Twilio callbacks:
 * which key signs in each deployment, without ambiguity.
 */
export const twilioSignatureDoc =
  "`X-Twilio-Signature` is base64 HMAC-SHA1 over PUBLIC_URL plus the request URI as received, followed by each form parameter's name and value sorted by name, keyed with the auth token of the provider that sent the message or call: `TWILIO_AUTH_TOKEN` for the `twilio` provider; for the sandbox telephony provider, the 64 lowercase hex digits of HMAC-SHA256 keyed with the server's master key (the 32 bytes MASTER_KEY encodes in base64, or of `master.key` in DATA_DIR) over the ASCII text `sandbox twilio auth token` — no separate setting, and nobody without the master key can sign";

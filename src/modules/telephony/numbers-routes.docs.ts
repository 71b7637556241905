// What the OpenAPI document says of the routes in numbers-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { phoneNumberExample } from './schemas.js';

export const docs = describeRoutes({
  listTelephonyProviders: {
    summary: 'Telephony providers to search',
    description:
      '`twilio` when Twilio credentials are configured; `sandbox` (offline numbers) except in production next to a real provider.',
  },
  listPhoneNumberCountries: {
    summary: 'Countries with the number types on sale there',
    description:
      'Only countries and types the provider offers and the pricing data prices. 404 `provider_not_found` for an unknown slug; 502 when the provider fails.',
  },
  searchPhoneNumbers: {
    summary: 'Available numbers with their monthly price and a signed price jwt',
    description:
      'Entries per spec 2.10. `price.jwt` is a JWS (ES256) signed by the service, bound to you, naming the number, its type, capabilities, address requirement and monthly price; valid 15 minutes and accepted by one purchase. `type` defaults to `local`. An empty list when nothing matches or the country/type is not priced.',
  },
  createPhoneNumberAddress: {
    summary: 'Register an address with the provider for regulated numbers',
    description:
      "Answers the provider address id (`addressSid`) to send with a purchase whose search entry says `addressRequirements: local` (an address in the number's country) or `foreign` (outside it). 400 `provider_refused` when the provider rejects the address; 502 when it fails.",
  },
  purchasePhoneNumber: {
    summary: 'Buy a number found by search',
    description:
      'In this order: (1) a card on file, else 409 `payment_method_required` with `checkoutUrl`; (2) the number is reserved with the provider (400 without a matching `addressSid` when one is required; 409 `conflict` when it was taken meanwhile); (3) its monthly subscription starts — if that fails the number is released again and the answer is 502; (4) `{ id }`. A forged, expired, foreign or already used `jwt` is 400 `invalid_token`. Send an `Idempotency-Key` to retry safely.',
  },
  listPhoneNumbers: {
    summary: 'Your numbers',
    description: 'Oldest first.',
  },
  getPhoneNumber: {
    summary: 'One of your numbers',
    description: '404 when it is not yours.',
  },
  updatePhoneNumber: {
    summary: 'Rename a number or change its description',
    description: 'Only `name` and `description` change; `description: null` clears it.',
  },
  deletePhoneNumber: {
    summary: 'Cancel the subscription and release the number',
    description:
      'The subscription is cancelled first: if that fails the answer is 502 and the number stays active. Then the provider releases the number (if that fails: 502, status `releasing`, DELETE again) and the record is gone.',
  },
});

export const examples = {
  updatePhoneNumber: {
    ...phoneNumberExample,
    description: 'Answers the support queue',
  },
};

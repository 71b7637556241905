// Phone numbers and addresses (spec 4.11); phone-verified callers only.
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { PhoneNumberService } from './numbers-service.js';
import {
  AddressBody,
  AddressResult,
  CountryList,
  IdResult,
  PhoneNumber,
  PhoneNumberList,
  PhoneNumberPatch,
  phoneNumberExample,
  ProviderList,
  ProviderParams,
  PurchaseBody,
  SearchQuery,
  SearchResult,
} from './schemas.js';

const tags = ['phone-numbers'];

export function numberRoutes(app: App, numbers: PhoneNumberService) {
  app.get(
    '/api/phone-numbers/search',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'listTelephonyProviders',
        summary: 'Telephony providers to search',
        description:
          '`twilio` when Twilio credentials are configured; `sandbox` (offline numbers) except in production next to a real provider.',
        response: { 200: ok(ProviderList, 'The provider slugs you can search') },
      },
    },
    async () => numbers.providerSlugs(),
  );

  app.get(
    '/api/phone-numbers/search/:provider/countries',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'listPhoneNumberCountries',
        summary: 'Countries with the number types on sale there',
        description:
          'Only countries and types the provider offers and the pricing data prices. 404 `provider_not_found` for an unknown slug; 502 when the provider fails.',
        params: ProviderParams,
        response: {
          200: ok(CountryList, 'Countries and their number types, by name'),
          ...errorResponses('provider_not_found', 'provider_error'),
        },
      },
    },
    async (request) => numbers.countries(request.params.provider),
  );

  app.get(
    '/api/phone-numbers/search/:provider',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'searchPhoneNumbers',
        summary: 'Available numbers with their monthly price and a signed price jwt',
        description:
          'Entries per spec 2.10. `price.jwt` is a JWS (ES256) signed by the service, bound to you, naming the number, its type, capabilities, address requirement and monthly price; valid 15 minutes and accepted by one purchase. `type` defaults to `local`. An empty list when nothing matches or the country/type is not priced.',
        params: ProviderParams,
        querystring: SearchQuery,
        response: {
          200: ok(SearchResult, 'Numbers for sale, each with a signed price offer'),
          ...errorResponses('provider_not_found', 'provider_error'),
        },
      },
    },
    async (request) =>
      numbers.search(request.auth!.userId, request.params.provider, {
        ...request.query,
        type: request.query.type ?? 'local',
        limit: request.query.limit ?? 20,
      }),
  );

  app.put(
    '/api/phone-numbers/address',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'createPhoneNumberAddress',
        summary: 'Register an address with the provider for regulated numbers',
        description:
          "Answers the provider address id (`addressSid`) to send with a purchase whose search entry says `addressRequirements: local` (an address in the number's country) or `foreign` (outside it). 400 `provider_refused` when the provider rejects the address; 502 when it fails.",
        body: AddressBody,
        response: {
          200: ok(AddressResult, 'The address registered with the provider'),
          ...errorResponses('provider_refused', 'provider_not_found', 'provider_error'),
        },
      },
    },
    async (request) => {
      const auth = request.auth!;
      const customerName = request.body.customerName ?? (`${auth.firstName} ${auth.lastName}`.trim() || auth.email);
      return numbers.createAddress(auth.userId, { ...request.body, customerName });
    },
  );

  app.put(
    '/api/phone-numbers',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags,
        operationId: 'purchasePhoneNumber',
        summary: 'Buy a number found by search',
        description:
          'In this order: (1) a card on file, else 409 `payment_method_required` with `checkoutUrl`; (2) the number is reserved with the provider (400 without a matching `addressSid` when one is required; 409 `conflict` when it was taken meanwhile); (3) its monthly subscription starts — if that fails the number is released again and the answer is 502; (4) `{ id }`. A forged, expired, foreign or already used `jwt` is 400 `invalid_token`. Send an `Idempotency-Key` to retry safely.',
        body: PurchaseBody,
        response: {
          200: ok(IdResult, 'The new phone number'),
          ...errorResponses(
            'invalid_token',
            'invalid_input',
            'provider_refused',
            'payment_method_required',
            'conflict',
            'rate_limited',
            'provider_error',
          ),
        },
      },
    },
    async (request) => numbers.purchase(request.auth!.userId, request.body),
  );

  app.get(
    '/api/phone-numbers',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'listPhoneNumbers',
        summary: 'Your numbers',
        description: 'Oldest first.',
        response: { 200: ok(PhoneNumberList, 'Your numbers, oldest first') },
      },
    },
    async (request) => numbers.list(request.auth!.userId),
  );

  app.get(
    '/api/phone-numbers/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'getPhoneNumber',
        summary: 'One of your numbers',
        description: '404 when it is not yours.',
        params: IdParams,
        response: { 200: ok(PhoneNumber, 'The number'), ...errorResponses('not_found') },
      },
    },
    async (request) => numbers.get(request.auth!.userId, request.params.id),
  );

  app.patch(
    '/api/phone-numbers/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'updatePhoneNumber',
        summary: 'Rename a number or change its description',
        description: 'Only `name` and `description` change; `description: null` clears it.',
        params: IdParams,
        body: PhoneNumberPatch,
        response: {
          200: ok(PhoneNumber, 'The updated number', {
            ...phoneNumberExample,
            description: 'Answers the support queue',
          }),
          ...errorResponses('invalid_input', 'not_found'),
        },
      },
    },
    async (request) => numbers.update(request.auth!.userId, request.params.id, request.body),
  );

  app.delete(
    '/api/phone-numbers/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'deletePhoneNumber',
        summary: 'Cancel the subscription and release the number',
        description:
          'The subscription is cancelled first: if that fails the answer is 502 and the number stays active. Then the provider releases the number (if that fails: 502, status `releasing`, DELETE again) and the record is gone.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Released' }), ...errorResponses('not_found', 'provider_error') },
      },
    },
    async (request, reply) => {
      await numbers.delete(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );
}

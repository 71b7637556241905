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
  ProviderList,
  ProviderParams,
  PurchaseBody,
  SearchQuery,
  SearchResult,
} from './schemas.js';
import { docs, examples } from './numbers-routes.docs.js';

const tags = ['phone-numbers'];

export function numberRoutes(app: App, numbers: PhoneNumberService) {
  app.get(
    '/api/phone-numbers/search',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.listTelephonyProviders,
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
        ...docs.listPhoneNumberCountries,
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
        ...docs.searchPhoneNumbers,
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
        ...docs.createPhoneNumberAddress,
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
        ...docs.purchasePhoneNumber,
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
        ...docs.listPhoneNumbers,
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
        ...docs.getPhoneNumber,
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
        ...docs.updatePhoneNumber,
        params: IdParams,
        body: PhoneNumberPatch,
        response: {
          200: ok(PhoneNumber, 'The updated number', examples.updatePhoneNumber),
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
        ...docs.deletePhoneNumber,
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

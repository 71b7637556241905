// Inbound configurations (spec 4.12, 3.3); phone-verified callers only.
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { InboundConfigurationService } from './inbound-service.js';
import { AttachBody, InboundBody, InboundConfiguration, InboundPatchBody, PhoneNumber } from './schemas.js';
import { docs, examples } from './inbound-routes.docs.js';

const tags = ['inbound-configurations'];

export function inboundRoutes(app: App, inbound: InboundConfigurationService) {
  app.get(
    '/api/inbound-configurations',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.listInboundConfigurations,
        response: {
          200: ok(
            Type.Array(InboundConfiguration),
            'Your inbound configurations, oldest first',
            examples.listInboundConfigurations,
          ),
        },
      },
    },
    async (request) => inbound.list(request.auth!.userId),
  );

  app.put(
    '/api/inbound-configurations',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.createInboundConfiguration,
        body: InboundBody,
        response: {
          200: ok(InboundConfiguration, 'The new inbound configuration', examples.createInboundConfiguration),
          ...errorResponses('invalid_input', 'not_found'),
        },
      },
    },
    async (request) => inbound.create(request.auth!.userId, request.body),
  );

  app.get(
    '/api/inbound-configurations/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.getInboundConfiguration,
        params: IdParams,
        response: { 200: ok(InboundConfiguration, 'The inbound configuration'), ...errorResponses('not_found') },
      },
    },
    async (request) => inbound.get(request.auth!.userId, request.params.id),
  );

  app.put(
    '/api/inbound-configurations/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.replaceInboundConfiguration,
        params: IdParams,
        body: InboundBody,
        response: {
          200: ok(InboundConfiguration, 'The replaced inbound configuration'),
          ...errorResponses('invalid_input', 'not_found'),
        },
      },
    },
    async (request) => inbound.replace(request.auth!.userId, request.params.id, request.body),
  );

  app.patch(
    '/api/inbound-configurations/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.updateInboundConfiguration,
        params: IdParams,
        body: InboundPatchBody,
        response: {
          200: ok(InboundConfiguration, 'The updated inbound configuration', examples.updateInboundConfiguration),
          ...errorResponses('invalid_input', 'not_found'),
        },
      },
    },
    async (request) => inbound.update(request.auth!.userId, request.params.id, request.body),
  );

  app.delete(
    '/api/inbound-configurations/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.deleteInboundConfiguration,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses('not_found', 'provider_error') },
      },
    },
    async (request, reply) => {
      await inbound.delete(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/inbound-configurations/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.attachPhoneNumber,
        params: IdParams,
        body: AttachBody,
        response: {
          200: ok(PhoneNumber, 'The number, attached to this configuration or detached', examples.attachPhoneNumber),
          ...errorResponses('not_found', 'conflict', 'provider_error'),
        },
      },
    },
    async (request) => {
      const { action, phone_number_id } = request.body;
      const userId = request.auth!.userId;
      return action === 'attach'
        ? inbound.attach(userId, request.params.id, phone_number_id)
        : inbound.detach(userId, request.params.id, phone_number_id);
    },
  );
}

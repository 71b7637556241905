// Inbound configurations (spec 4.12, 3.3); phone-verified callers only.
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { InboundConfigurationService } from './inbound-service.js';
import {
  AttachBody,
  INBOUND_ID_EXAMPLE,
  InboundBody,
  InboundConfiguration,
  InboundPatchBody,
  PhoneNumber,
  inboundConfigurationExample,
  phoneNumberExample,
} from './schemas.js';

const tags = ['inbound-configurations'];
const REFERENCES =
  '`agent` must be an object in your `agents` store, each of `humanAgents` one in `contacts` (duplicates removed), `source` one in `campaigns` or `{ "type": "manual" }` (404 otherwise); `knowledge_base_id` must be one of your knowledge bases.';

export function inboundRoutes(app: App, inbound: InboundConfigurationService) {
  app.get(
    '/api/inbound-configurations',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        operationId: 'listInboundConfigurations',
        summary: 'Your inbound configurations',
        description: 'Oldest first, each with its human agents and attached numbers.',
        response: {
          200: ok(Type.Array(InboundConfiguration), 'Your inbound configurations, oldest first', [
            inboundConfigurationExample,
          ]),
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
        operationId: 'createInboundConfiguration',
        summary: 'Create an inbound configuration',
        description: REFERENCES,
        body: InboundBody,
        response: {
          200: ok(InboundConfiguration, 'The new inbound configuration', {
            ...inboundConfigurationExample,
            phoneNumberIds: [],
          }),
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
        operationId: 'getInboundConfiguration',
        summary: 'One inbound configuration',
        description: '404 when it is not yours.',
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
        operationId: 'replaceInboundConfiguration',
        summary: 'Replace an inbound configuration',
        description: `Every field as on create; optional fields left out are cleared. ${REFERENCES}`,
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
        operationId: 'updateInboundConfiguration',
        summary: 'Change some fields of an inbound configuration',
        description: `Any of name, description, source, humanAgents, knowledge_base_id; the agent changes through PUT. ${REFERENCES}`,
        params: IdParams,
        body: InboundPatchBody,
        response: {
          200: ok(InboundConfiguration, 'The updated inbound configuration', {
            ...inboundConfigurationExample,
            name: 'Front desk (evenings)',
            humanAgents: [],
            knowledge_base_id: null,
          }),
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
        operationId: 'deleteInboundConfiguration',
        summary: 'Delete an inbound configuration',
        description:
          'Its numbers are detached first (their voice webhooks cleared); 502 if the provider fails, and the configuration stays.',
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
        operationId: 'attachPhoneNumber',
        summary: 'Attach a number to this configuration, or detach it',
        description:
          "Spec 3.3. `attach`: the number must be of type `inbound` or `both` (else 409 `conflict`) and not attached elsewhere (409: detach it there first); attaching again is a no-op. `detach`: the number must be attached to this configuration (else 409 `conflict`). With a real provider, attach points the number's voice webhook at the service and detach clears it (502 if the provider fails; nothing changes). Answers the number.",
        params: IdParams,
        body: AttachBody,
        response: {
          200: ok(PhoneNumber, 'The number, attached to this configuration or detached', {
            ...phoneNumberExample,
            inboundConfigurationId: INBOUND_ID_EXAMPLE,
          }),
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

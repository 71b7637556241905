// SMS (spec 4.13) and the provider's status callbacks for them.
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { formParams } from '../../providers/telephony/twilio-signature.js';
import type { SmsService } from './sms-service.js';
import { SmsBody, SmsMessage, StatusCallbackBody } from './schemas.js';
import { docs, examples } from './sms-routes.docs.js';

export async function smsRoutes(app: App, sms: SmsService) {
  app.post(
    '/api/sms/messages',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags: ['sms'],
        ...docs.sendSms,
        body: SmsBody,
        response: {
          200: ok(SmsMessage, "The message, with the provider's answer to the send", examples.sendSms),
          ...errorResponses(
            'invalid_input',
            'insufficient_funds',
            'not_found',
            'conflict',
            'rate_limited',
            'provider_refused',
            'provider_error',
          ),
        },
      },
    },
    async (request) => sms.send(request.auth!.userId, request.body),
  );

  app.get(
    '/api/sms/messages',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['sms'],
        ...docs.listSms,
        querystring: Type.Object({
          phoneNumberId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          before: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          limit: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 200,
              default: 50,
              description: 'At most this many messages (default 50)',
            }),
          ),
        }),
        response: { 200: ok(Type.Array(SmsMessage), 'Your messages, newest first', examples.listSms) },
      },
    },
    async (request) => sms.list(request.auth!.userId, { ...request.query, limit: request.query.limit ?? 50 }),
  );

  app.get(
    '/api/sms/messages/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['sms'],
        ...docs.getSms,
        params: IdParams,
        response: { 200: ok(SmsMessage, 'The message and its status history'), ...errorResponses('not_found') },
      },
    },
    async (request) => sms.get(request.auth!.userId, request.params.id),
  );

  // Form bodies are parsed for this route only (Twilio posts application/x-www-form-urlencoded).
  await app.register(async (plugin) => {
    const scope = plugin as unknown as App;
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, formParams(String(body))),
    );
    scope.post(
      '/api/webhooks/twilio/sms/:id',
      {
        schema: {
          tags: ['webhooks'],
          ...docs.twilioSmsStatusCallback,
          params: IdParams,
          headers: Type.Object({ 'x-twilio-signature': Type.Optional(Type.String()) }),
          body: StatusCallbackBody,
          consumes: ['application/x-www-form-urlencoded'],
          response: {
            204: Type.Null({ description: 'Recorded (or already recorded)' }),
            ...errorResponses('invalid_signature', 'invalid_input', 'not_found'),
          },
        },
      },
      async (request, reply) => {
        const signature = request.headers['x-twilio-signature'];
        await sms.handleStatusCallback(
          request.params.id,
          request.raw.url ?? request.url,
          Array.isArray(signature) ? signature[0] : signature,
          request.body,
        );
        return reply.status(204).send(null);
      },
    );
  });
}

// SMS (spec 4.13) and the provider's status callbacks for them.
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { formParams } from '../../providers/telephony/twilio-signature.js';
import type { SmsService } from './sms-service.js';
import { SmsBody, SmsMessage, StatusCallbackBody, smsMessageExample, twilioSignatureDoc } from './schemas.js';

export async function smsRoutes(app: App, sms: SmsService) {
  app.post(
    '/api/sms/messages',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags: ['sms'],
        operationId: 'sendSms',
        summary: 'Send an SMS from one of your numbers',
        description:
          "The sender must be your number and able to send SMS (404 / 409 otherwise); `to` in E.164; body 1–1,600 characters; at most 60 messages a minute per user (429). Each message costs `SMS_PRICE_USD` per segment (160 GSM-7 / 70 UCS-2 characters; 153 / 67 each when split), rounded up to the next cent, held from your prepaid balance before it is sent (402 `insufficient_funds` when the balance does not cover it: nothing is sent), kept when it reaches `sent` or `delivered`, returned when it fails first. The answer mirrors the provider's; delivery updates arrive at the service (`sms_status` events, GET /api/sms/messages/{id}). Send an `Idempotency-Key` to retry without sending twice.",
        body: SmsBody,
        response: {
          200: ok(SmsMessage, "The message, with the provider's answer to the send", {
            ...smsMessageExample,
            status: 'queued',
            statuses: [smsMessageExample.statuses[0]],
            updatedAt: smsMessageExample.createdAt,
          }),
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
        operationId: 'listSms',
        summary: 'Messages you sent, newest first, with their status histories',
        description: 'Optional `phoneNumberId` filter; page with `before` = the id of the last message already seen.',
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
        response: { 200: ok(Type.Array(SmsMessage), 'Your messages, newest first', [smsMessageExample]) },
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
        operationId: 'getSms',
        summary: 'One message you sent, with its status history',
        description: '404 when it is not yours.',
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
          operationId: 'twilioSmsStatusCallback',
          summary: 'Twilio status callback for a message (called by the provider)',
          description:
            `Checked before anything else: ${twilioSignatureDoc}` +
            '; a bad signature is 400 `invalid_signature` and changes nothing. Each status is recorded once per message (repeats are no-ops) and emitted as an `sms_status` event.',
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

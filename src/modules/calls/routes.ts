// Progress reports of the audio server (DESIGN "Calls", "Provider webhooks in").
// POST /api/session/call is built on top of CallService.start once signed
// payloads, numbers, knowledge and personas are in (see docs/decisions/calls.md).
import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';
import { CALL_STATUSES } from '../../providers/audio/interface.js';

const AudioReport = Type.Object({
  status: Type.Union(CALL_STATUSES.map((s) => Type.Literal(s))),
  at: Type.String({ format: 'date-time' }),
  duration_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
  transcript: Type.Optional(Type.Array(Type.Object({ role: Type.Union([Type.Literal('agent'), Type.Literal('contact')]), text: Type.String() }))),
}, {
  description: 'One status change of the call at the audio server',
  examples: [{ status: 'completed', at: '2026-11-23T10:00:42.000Z', duration_seconds: 38, transcript: [{ role: 'agent', text: 'Hello Grace, this is Amy from the clinic.' }, { role: 'contact', text: 'Hi Amy.' }] }],
});

export function callRoutes(app: App, services: Services) {
  const { calls } = services.calls;
  services.providers.audio.reportErrorsTo?.(app.log);
  app.addHook('onClose', async () => services.providers.audio.close?.());

  // The signature covers the body exactly as sent: this scope keeps JSON bodies as raw bytes.
  app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post(
      '/api/webhooks/audio/:sessionId',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'receiveAudioReport',
          summary: "The audio server's progress report for one call session",
          description:
            'Called by the audio server (`AUDIO_SERVER_URL`), not by API users. Signed with `AUDIO_SERVER_SECRET` as Standard Webhooks specifies (`webhook-id`, `webhook-timestamp` within 5 minutes, `webhook-signature`), checked on the raw body before anything else; a bad signature is 400 and changes nothing. A report is applied once per `webhook-id`, and only when it moves the session forward (queued → ringing → in_progress → a final status); it then emits a `call_status` event and queues the session\'s webhook.',
          params: Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 100 }) }),
          headers: Type.Object({
            'webhook-id': Type.Optional(Type.String()),
            'webhook-timestamp': Type.Optional(Type.String()),
            'webhook-signature': Type.Optional(Type.String()),
          }),
          body: AudioReport,
          response: { 204: Type.Null({ description: 'Accepted (also for a report seen before)' }), ...errors(400, 404, 415) },
        },
        // The body is checked against the signature first and parsed by the service; the schema above documents it.
        validatorCompiler: ({ httpPart, schema }) => (httpPart === 'body' ? () => true : app.validatorCompiler!({ schema, httpPart, method: 'POST', url: '/api/webhooks/audio/:sessionId' })),
      },
      async (request, reply) => {
        await calls.handleAudioReport((request.params as { sessionId: string }).sessionId, request.body as unknown as Buffer, request.headers);
        return reply.status(204).send(null);
      },
    );
  });
}

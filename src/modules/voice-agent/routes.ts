// Routes of the built-in voice agent (DESIGN.md "Voice agent"): Twilio's
// callbacks about calls (progress, answering machines, transfers' legs), its
// voice webhook for calls to our numbers, and the media WebSocket speaking
// Twilio Media Streams.
import { Type } from 'typebox';
import { AppError } from '../../http/errors.js';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { type SignedParams, formParams } from '../../providers/telephony/twilio-signature.js';
import type { DialledLegs } from '../calls/transfers.js';
import type { InboundCalls } from './inbound-calls.js';
import type { MediaSockets } from './media-sockets.js';
import type { TwilioCallCallbacks } from './twilio-callbacks.js';
import { docs, examples } from './routes.docs.js';

/** What the voice routes touch: Twilio's callbacks, the inbound answer, transfers' legs and the media sockets. */
export interface VoiceRouteDeps {
  callbacks: TwilioCallCallbacks;
  inbound: InboundCalls;
  /** Transfers' billed legs; null when calls are not charged (no leg is dialled). */
  legs: DialledLegs | null;
  mediaSockets: MediaSockets;
}

const TwilioForm = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), {
  description: "Twilio's callback parameters, form-encoded (CallSid, CallStatus, CallDuration, AnsweredBy, …)",
});
const SessionParams = Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 100 }) });

export function voiceRoutes(app: App, voice: VoiceRouteDeps) {
  const { inbound, legs } = voice;
  // Twilio posts form bodies; the signature covers PUBLIC_URL + the request URI + the parameters.
  app.register(async (plugin) => {
    const scope = plugin as unknown as App;
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, formParams(String(body))),
    );
    const signatureOf = (header: string | string[] | undefined) => (Array.isArray(header) ? header[0] : header);
    const callback = (
      path: string,
      doc: { operationId: string; summary: string; description: string },
      handle: (sessionId: string, uri: string, signature: string | undefined, params: SignedParams) => Promise<void>,
      example?: Record<string, string>,
    ) =>
      scope.post(
        path,
        {
          schema: {
            tags: ['webhooks'],
            ...doc,
            params: SessionParams,
            headers: Type.Object({ 'x-twilio-signature': Type.Optional(Type.String()) }),
            body: example ? { ...TwilioForm, examples: [example] } : TwilioForm,
            consumes: ['application/x-www-form-urlencoded'],
            response: {
              204: Type.Null({ description: 'Applied (or seen before)' }),
              ...errorResponses('invalid_signature', 'invalid_input', 'not_found'),
            },
          },
        },
        async (request, reply) => {
          await handle(
            (request.params as { sessionId: string }).sessionId,
            request.raw.url ?? request.url,
            signatureOf(request.headers['x-twilio-signature']),
            request.body as SignedParams,
          );
          return reply.status(204).send(null);
        },
      );
    callback('/api/webhooks/twilio/call/:sessionId', docs.twilioCallStatusCallback, (id, uri, sig, params) =>
      voice.callbacks.handleStatus(id, uri, sig, params),
    );
    scope.post(
      '/api/webhooks/twilio/voice/:numberId',
      {
        schema: {
          tags: ['webhooks'],
          ...docs.twilioVoiceWebhook,
          params: Type.Object({ numberId: Type.String({ minLength: 1, maxLength: 100 }) }),
          headers: Type.Object({ 'x-twilio-signature': Type.Optional(Type.String()) }),
          body: TwilioForm,
          consumes: ['application/x-www-form-urlencoded'],
          produces: ['text/xml'],
          response: {
            200: Type.String({
              description: 'TwiML',
              examples: [examples.twilioVoiceWebhook],
            }),
            ...errorResponses('invalid_signature', 'not_found'),
          },
        },
      },
      async (request, reply) => {
        const twiml = await inbound.answer(
          (request.params as { numberId: string }).numberId,
          request.raw.url ?? request.url,
          signatureOf(request.headers['x-twilio-signature']),
          request.body as SignedParams,
        );
        return reply.type('text/xml').send(twiml);
      },
    );
    callback('/api/webhooks/twilio/amd/:sessionId', docs.twilioMachineDetectionCallback, (id, uri, sig, params) =>
      voice.callbacks.handleMachineDetection(id, uri, sig, params),
    );
    callback(
      '/api/webhooks/twilio/dial/:sessionId',
      docs.twilioDialedLegCallback,
      async (id, uri, sig, params) => {
        if (!legs) throw new AppError('not_found', 'this server dials no transfer legs');
        await legs.handleCallback(id, uri, sig, params);
      },
      examples.twilioDialedLegCallbackBody,
    );
  });

  app.get(
    '/api/media/twilio',
    {
      websocket: true,
      schema: {
        tags: ['calls'],
        ...docs.twilioMediaStream,
      },
    },
    (socket, request) => voice.mediaSockets.carryTwilio(socket, request.ip, app.log),
  );
}

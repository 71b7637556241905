// The live event stream (spec 4.9 and 6): GET /api/events/{type}.
import { credentialOf, isTwoFactorPending } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';
import { responseSink } from './http-sink.js';
import { EventStreamBody, EventStreamHeaders, EventStreamParams, EventStreamQuery } from './schemas.js';

const streamHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  'x-accel-buffering': 'no', // nginx: pass frames through instead of buffering them
  connection: 'keep-alive',
};

export function eventRoutes(app: App, services: Services) {
  const { eventStreams, authenticator } = services;
  eventStreams.reportErrorsTo((err, context) => app.log.error({ err }, `${context} failed; retrying`));
  // preClose runs before the server waits for open connections: end the streams so shutdown does not hang.
  app.addHook('preClose', async () => eventStreams.closeAll());
  app.addHook('onClose', async () => eventStreams.stop());

  app.get(
    '/api/events/:type',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['events'],
        operationId: 'streamEvents',
        summary: 'Live stream of your events (server-sent events), with replay from Last-Event-ID',
        description:
          'Frames carry `id`, `event` (the type) and `data` (the JSON payload). Send `Last-Event-ID` (or `?lastEventId=`) to receive every stored event after that id first, then live ones, none missed or repeated. Other query parameters filter on payload fields, exact text with `*` matching any run of characters (`?type=calls`, `?object_id=0193*`; repeat a parameter for any of several values; `a.b` reaches a nested field); a filter on a field the event lacks does not match. At most a configured number of open streams per user (429 `rate_limited` past it). A client too slow to read is disconnected and resumes with Last-Event-ID; a revoked credential ends the stream. Besides the spec\'s data-plane types, `call_status` reports the progress of a call session: `{ session_id, direction (outbound, inbound or web), status (queued, ringing, in_progress, completed, failed, busy, no_answer, canceled), at, duration_seconds? (when it ended), transcript? ([{ role: agent | contact, text }], when completed), outcome? and reason? (final states of calls the built-in voice agent carries: completed, voicemail, transferred, no_answer, busy, refused, provider_error, instance_stopped, max_duration) }`; follow one call with `GET /api/events/call_status?session_id=<id>`. `call_transcript` streams a live call\'s transcript as it is said: `{ session_id, role (agent | caller), text, at }` (`GET /api/events/call_transcript?session_id=<id>`).',
        params: EventStreamParams,
        querystring: EventStreamQuery,
        headers: EventStreamHeaders,
        response: { 200: { description: 'The stream', content: { 'text/event-stream': { schema: EventStreamBody } } }, ...errorResponses('rate_limited') },
      },
    },
    async (request, reply) => {
      const auth = request.auth!;
      const credential = credentialOf(request);
      const connection = await eventStreams.open({
        userId: auth.userId,
        type: request.params.type,
        query: request.query as Record<string, unknown>,
        lastEventId: request.headers['last-event-id'] ?? request.query.lastEventId ?? null,
        // The guard ran once; an open stream re-checks so a revoked key or ended session stops it.
        stillAuthorized: async () => {
          const current = credential ? await authenticator.authenticate(credential) : null;
          return !!current && current.userId === auth.userId && current.phoneVerified && !isTwoFactorPending(current);
        },
      });
      reply.hijack();
      try {
        reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...streamHeaders });
        reply.raw.flushHeaders();
        request.raw.socket.setNoDelay(true);
        await connection.attach(responseSink(reply.raw));
      } catch (err) {
        request.log.error({ err }, 'event stream failed');
        connection.close('error');
      }
    },
  );
}

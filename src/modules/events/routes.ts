// The live event stream (spec 4.9 and 6): GET /api/events/{type}.
import { type Authenticator, credentialOf, isTwoFactorPending } from '../../http/auth.js';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { responseSink } from './http-sink.js';
import { eventPayloadSchemas } from './payloads.js';
import type { EventStreamService } from './service.js';
import type { EventTickets } from './tickets.js';
import { EventStreamBody, EventStreamHeaders, EventStreamParams, EventStreamQuery, EventTicket } from './schemas.js';
import { docs, examples } from './routes.docs.js';

const streamHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  'x-accel-buffering': 'no', // nginx: pass frames through instead of buffering them
  connection: 'keep-alive',
};

/** What the event routes touch: the streams, the tickets that open them, and the authenticator that re-checks a stream's credential. */
export interface EventRouteDeps {
  eventStreams: EventStreamService;
  eventTickets: EventTickets;
  authenticator: Authenticator;
}

export function eventRoutes(app: App, deps: EventRouteDeps) {
  const { eventStreams, eventTickets, authenticator } = deps;
  for (const schema of Object.values(eventPayloadSchemas)) app.addSchema(schema);
  eventStreams.reportErrorsTo((err, context) => app.log.error({ err }, `${context} failed; retrying`));
  // preClose runs before the server waits for open connections: end the streams so shutdown does not hang.
  app.addHook('preClose', async () => eventStreams.closeAll());
  app.addHook('onClose', async () => eventStreams.stop());

  app.post(
    '/api/events/ticket',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['events'],
        ...docs.createEventTicket,
        response: {
          200: ok(EventTicket, 'The ticket', examples.createEventTicket),
        },
      },
    },
    async (request) => eventTickets.issue(request.auth!),
  );

  app.get(
    '/api/events/:type',
    {
      config: { auth: 'verified', ticket: true },
      schema: {
        tags: ['events'],
        ...docs.streamEvents,
        params: EventStreamParams,
        querystring: EventStreamQuery,
        headers: EventStreamHeaders,
        response: {
          200: {
            description: "The stream: one frame per event, each frame's `data` the payload schema of its `event` type",
            content: { 'text/event-stream': { schema: EventStreamBody } },
          },
          ...errorResponses('rate_limited'),
        },
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
          // Opened with a ticket: the session or key that asked for it is re-checked (tickets.ts).
          const current = credential
            ? await authenticator.authenticate(credential)
            : await authenticator.recheck(auth.userId, auth.credential, auth.twoFactorPassed);
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

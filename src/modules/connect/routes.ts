// POST /api/connect (spec 4.10): one ingestion job per request, answered when
// the stream ends. Counts travel in response headers (a 204 has no body); a
// connector failure is 502 with the same counts in the body. See
// docs/decisions/connect.md.
import { Type } from 'typebox';
import { AppError } from '../../http/errors.js';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { STORE_NAMES } from '../data/root-service.js';
import type { ConnectResult, ConnectService } from './service.js';
import { docs, examples } from './routes.docs.js';

const ConnectBody = Type.Object(
  {
    repository: Type.String({
      description: `The store the records go to: one of ${STORE_NAMES.join(', ')}`,
      examples: ['contacts'],
    }),
    path: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'Connector path (`/get-leads` spends lead credits)',
      examples: ['/get-leads'],
    }),
    params: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Forwarded to the connector as its JSON body. `/get-leads`: `credits` (whole number, clamped); sandbox: `limit` (default 10, at most 1,000)',
        examples: [{ credits: 25 }],
      }),
    ),
  },
  { additionalProperties: false, examples: [examples.connectBody] },
);

const countHeaders = {
  'x-objects-written': {
    type: 'integer',
    description: 'Records written as objects (each announced by an object_created event)',
    examples: [25],
  },
  'x-frames-skipped': {
    type: 'integer',
    description: 'Frames skipped because they were not a JSON object',
    examples: [0],
  },
  'x-credits-granted': {
    type: 'integer',
    description: '`/get-leads` only: the credits granted after clamping to allowance plus balance',
    examples: [25],
  },
};

const Completed = Type.Null({
  description: 'The stream ended (or `/get-leads` had no allowance: nothing streamed). Counts in the headers.',
  headers: countHeaders,
});

const ConnectorFailure = Type.Object(
  {
    message: Type.String(),
    code: Type.Literal('provider_error'),
    written: Type.Integer({ description: 'Records written before the failure; they stay' }),
    skipped: Type.Integer(),
    credits: Type.Optional(
      Type.Integer({ description: '`/get-leads`: credits granted; only the written ones are charged' }),
    ),
  },
  {
    description:
      'The connector could not be reached or broke off mid-stream; what was written stays and is counted (in the body and the headers)',
    headers: countHeaders,
    examples: [examples.connectorFailure],
  },
);

/** What the connect routes touch: the lead jobs. */
export interface ConnectRouteDeps {
  jobs: ConnectService;
}

export function connectRoutes(app: App, deps: ConnectRouteDeps) {
  const { jobs } = deps;
  app.post(
    '/api/connect',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags: ['connect'],
        ...docs.runConnectorJob,
        body: ConnectBody,
        response: { 204: Completed, ...errorResponses('invalid_input', 'insufficient_funds'), 502: ConnectorFailure },
      },
    },
    async (request, reply) => {
      // The client going away stops the job (objects written so far stay; credits are settled).
      const controller = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) controller.abort();
      };
      reply.raw.once('close', onClose);
      const result = await jobs
        .run(request.auth!.userId, { ...request.body, params: request.body.params ?? {} }, controller.signal)
        .finally(() => reply.raw.off('close', onClose));
      if (result.settlementError)
        request.log.error(
          { err: result.settlementError },
          'connect: settling lead credits failed; recovery will finish it',
        );
      const headers = countsOf(result);
      if (result.failure !== null) {
        const extra: Record<string, unknown> = { written: result.written, skipped: result.skipped };
        if (result.credits !== null) extra.credits = result.credits;
        throw new AppError('provider_error', result.failure, extra, headers);
      }
      return reply.status(204).headers(headers).send(null);
    },
  );
}

function countsOf(result: ConnectResult): Record<string, string> {
  const headers: Record<string, string> = {
    'x-objects-written': String(result.written),
    'x-frames-skipped': String(result.skipped),
  };
  if (result.credits !== null) headers['x-credits-granted'] = String(result.credits);
  return headers;
}

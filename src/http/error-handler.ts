// Maps every error to { message, code } with the right status. Unknown errors
// become a generic 500 carrying the request id; their cause goes to the log only.
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError } from './errors.js';

const fastifyCodes: Record<string, { status: number; code: string; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_input' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', message: 'request body is empty but content-type is application/json' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', message: 'request body is not valid JSON' },
};

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    if (err instanceof AppError) {
      if (err.headers) reply.headers(err.headers);
      return reply.status(err.status).send({ ...err.extra, message: err.message, code: err.code });
    }
    const fe = err as FastifyError;
    if (fe.validation) {
      const where = fe.validationContext ?? 'body';
      return reply.status(400).send({ message: `${where}${fe.message.replace(/^(body|querystring|params|headers)/, '')}`, code: 'invalid_input' });
    }
    const known = fe.code ? fastifyCodes[fe.code] : undefined;
    if (known) return reply.status(known.status).send({ message: known.message ?? fe.message, code: known.code });
    if (err instanceof SyntaxError || (fe.statusCode === 400 && /JSON/i.test(fe.message))) {
      return reply.status(400).send({ message: 'request body is not valid JSON', code: 'invalid_json' });
    }
    const status = fe.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.status(status).send({ message: fe.message, code: status === 429 ? 'rate_limited' : 'invalid_input' });
    }
    request.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ message: `internal error (request ${request.id})`, code: 'internal_error' });
  });

  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ message: `no route ${request.method} ${request.url.split('?')[0]}`, code: 'route_not_found' }),
  );
}

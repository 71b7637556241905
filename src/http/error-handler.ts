// Maps every error to { message, code } with the right status: our AppErrors,
// validation failures, Fastify's and its plugins' errors, the router's
// (bad URL, parameter too long) and Node's own answers to requests it cannot
// parse (malformed HTTP, headers too large, timeouts). Framework messages are
// replaced by our own, so no answer echoes the request back. Unknown errors
// become a generic 500 carrying the request id; their cause goes to the log only.
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { isDatabaseUnavailable } from '../db/database.js';
import { AppError, type ErrorCode, errorStatus } from './errors.js';

interface Answer {
  code: ErrorCode;
  message: string;
}

/** Fastify's, the router's and the body plugins' error codes. */
const frameworkCodes: Record<string, Answer> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', message: 'request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported_media_type',
    message: 'unsupported content-type: send application/json',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'invalid_input',
    message: 'the content-length header does not match the body',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: 'invalid_json',
    message: 'request body is empty but content-type is application/json',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'invalid_json', message: 'request body is not valid JSON' },
  FST_ERR_BAD_URL: { code: 'invalid_input', message: 'the URL is not valid (bad percent-encoding)' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'uri_too_long', message: 'a path parameter is too long' },
  // @fastify/multipart
  FST_INVALID_MULTIPART_CONTENT_TYPE: {
    code: 'unsupported_media_type',
    message: 'the request is not multipart/form-data',
  },
  FST_REQ_FILE_TOO_LARGE: { code: 'payload_too_large', message: 'an uploaded file is too large' },
  FST_PARTS_LIMIT: { code: 'payload_too_large', message: 'too many parts in the multipart body' },
  FST_FILES_LIMIT: { code: 'payload_too_large', message: 'too many files in the multipart body' },
  FST_FIELDS_LIMIT: { code: 'payload_too_large', message: 'too many fields in the multipart body' },
  FST_PROTO_VIOLATION: { code: 'invalid_input', message: 'the multipart body may not contain a "__proto__" field' },
  FST_INVALID_JSON_FIELD_ERROR: { code: 'invalid_json', message: 'a multipart JSON field is not valid JSON' },
};

/** Any other client error, by the status its library gave it. */
const byStatus: Record<number, Answer> = {
  404: { code: 'route_not_found', message: 'no such route' },
  408: { code: 'request_timeout', message: 'the request took too long to arrive' },
  413: { code: 'payload_too_large', message: 'request body is too large' },
  414: { code: 'uri_too_long', message: 'the URL is too long' },
  415: { code: 'unsupported_media_type', message: 'unsupported content-type' },
  429: { code: 'rate_limited', message: 'too many requests: try again later' },
  431: { code: 'headers_too_large', message: 'request headers are too large' },
};
const badRequest: Answer = { code: 'invalid_input', message: 'the request is not valid' };

/** The answer for an error that is not an AppError, or null when it is a server fault. */
export function answerFor(err: FastifyError): Answer | null {
  if (err.validation) {
    const where = err.validationContext ?? 'body';
    return {
      code: 'invalid_input',
      message: `${where}${err.message.replace(/^(body|querystring|params|headers)/, '')}`,
    };
  }
  const known = err.code ? frameworkCodes[err.code] : undefined;
  if (known) return known;
  const status = err.statusCode ?? 500;
  if (status < 400 || status >= 500) return null;
  return byStatus[status] ?? badRequest;
}

function send(reply: FastifyReply, { code, message }: Answer): FastifyReply {
  return reply.status(errorStatus[code]).send({ message, code });
}

/** `onDatabaseUnavailable`: a request failed because the database could not be reached (metrics). */
export function installErrorHandler(app: FastifyInstance, hooks: { onDatabaseUnavailable?: () => void } = {}): void {
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    if (err instanceof AppError) {
      if (err.headers) reply.headers(err.headers);
      return reply.status(err.status).send({ ...err.extra, message: err.message, code: err.code });
    }
    // The database went away (restart, failover, network): the client may retry in a moment; not a bug of ours.
    if (isDatabaseUnavailable(err)) {
      hooks.onDatabaseUnavailable?.();
      request.log.warn({ code: (err as { code?: string }).code }, `database unavailable: ${err.message}`);
      reply.header('retry-after', '5');
      return send(reply, {
        code: 'not_ready',
        message: 'the database is unavailable right now; try again in a few seconds',
      });
    }
    const answer = answerFor(err);
    if (answer) return send(reply, answer);
    request.log.error({ err }, 'unhandled error');
    return send(reply, { code: 'internal_error', message: `internal error (request ${request.id})` });
  });

  app.setNotFoundHandler((request, reply) => {
    // A browser's CORS preflight from an origin CORS_ORIGINS does not list (listed ones are answered by
    // @fastify/cors before routing): say why, rather than "no route". No CORS headers, so the browser still refuses.
    if (request.method === 'OPTIONS' && request.headers.origin && request.headers['access-control-request-method']) {
      return reply.status(403).send({
        message:
          'this origin may not call the API from a browser: the server lists the origins it accepts in CORS_ORIGINS',
        code: 'forbidden',
      });
    }
    const path = request.url.split('?')[0];
    const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
    return reply.status(404).send({ message: `no route ${request.method} ${shown}`, code: 'route_not_found' });
  });
}

/**
 * Fastify options for the errors raised before a route is found (a URL that
 * does not decode, a path parameter over the router's maxParamLength) and for
 * requests Node cannot parse: both answer { message, code } too.
 */
export const frameworkErrorOptions: Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler'> = {
  frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    reply.header('x-request-id', request.id);
    const answer = answerFor(err);
    if (answer) return send(reply, answer);
    request.log.error({ err }, 'router error');
    return send(reply, { code: 'internal_error', message: `internal error (request ${request.id})` });
  },
  clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const answer: Answer =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? byStatus[431]
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? byStatus[408]
          : { code: 'invalid_input', message: 'malformed HTTP request' };
    const status = errorStatus[answer.code];
    const body = JSON.stringify(answer);
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${statusText[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  },
};

const statusText: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

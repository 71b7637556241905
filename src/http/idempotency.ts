// The Idempotency-Key route option. A route that spends money or sends
// something declares `config: { auth: …, idempotent: true }`; this plugin then
// documents the header, claims the key before the handler runs (after
// authentication and validation), replays a stored answer instead of running
// again, and stores the answer when it is sent. Rules: IdempotencyService.
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { Type } from 'typebox';
import { IDEMPOTENCY_KEY_PATTERN, type IdempotencyService } from '../modules/platform/idempotency.js';
import type { ErrorCode } from './errors.js';
import { errorResponses } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Accept an Idempotency-Key header (needs `auth`: keys are per user). */
    idempotent?: boolean;
    /** Set by the plugin from the route's documented success headers. */
    idempotencyReplayHeaders?: readonly string[];
  }
  interface FastifyRequest {
    /** Set while this request owns an Idempotency-Key and its answer is not stored yet. */
    idempotency: { userId: string; key: string; replayHeaders: readonly string[] } | null;
  }
}

const HEADER = 'idempotency-key';

const keyHeaderSchema = Type.String({
  pattern: IDEMPOTENCY_KEY_PATTERN,
  description:
    'Makes a retry safe: the first successful answer is stored for 24 h and replayed (with its documented headers and `Idempotent-Replayed: true`) for a retry with the same key; the same key with a different request is 422 `idempotency_mismatch`; a retry while the first request runs is 409 `idempotency_in_progress`. Error answers are not stored.',
  examples: ['7f9c2a4e-topup-2026-11-23'],
});

function withKeyHeader(headers: unknown): unknown {
  const base = (headers as { properties?: Record<string, unknown> } | undefined) ?? { type: 'object', properties: {} };
  return { ...base, type: 'object', properties: { ...(base.properties ?? {}), [HEADER]: keyHeaderSchema } };
}

/**
 * The route's error answers at the statuses of `codes`, with those codes added
 * to the codes the route declared there (errorResponses), so the docs list both.
 */
function withCodes(response: Record<string, unknown>, ...codes: ErrorCode[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const [status, schema] of Object.entries(errorResponses(...codes))) {
    const existing = response[status] as { examples?: unknown[]; $ref?: string } | undefined;
    const declared = existing?.examples ?? [];
    const added = (schema as { examples?: unknown[] }).examples ?? [];
    // An answer with fields of its own (errorWith) keeps its schema; the shared one gets the examples of both.
    out[Number(status)] =
      existing && !existing.$ref
        ? { ...existing, examples: [...declared, ...added] }
        : Type.Ref('ErrorResponse', { examples: [...declared, ...added] });
  }
  return out;
}

/**
 * The headers a replay must carry: those the route documents on its success
 * answers (`headers` of a 2xx/3xx response schema, e.g. X-Session-Id), and
 * Location. Headers every answer gets anyway (request id, rate limits,
 * security headers) are not stored.
 */
function documentedSuccessHeaders(response: Record<string, unknown> | undefined): string[] {
  const names = new Set<string>(['location']);
  for (const [status, schema] of Object.entries(response ?? {})) {
    if (!/^[23]/.test(status)) continue;
    const headers = (
      schema as { headers?: { properties?: Record<string, unknown> } & Record<string, unknown> } | undefined
    )?.headers;
    const declared = headers?.properties ?? headers ?? {};
    for (const name of Object.keys(declared))
      if (name !== 'type' && name !== 'properties') names.add(name.toLowerCase());
  }
  return [...names];
}

function pickHeaders(reply: FastifyReply, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = reply.getHeader(name);
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/** Must run before routes are registered. */
export function installIdempotency(app: FastifyInstance, service: IdempotencyService): void {
  app.decorateRequest('idempotency', null);

  const begin: preHandlerHookHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers[HEADER];
    if (typeof key !== 'string' || !request.auth) return;
    const userId = request.auth.userId;
    const outcome = await service.begin(userId, key, service.fingerprint(request.method, request.url, request.body));
    if (outcome.kind === 'run') {
      request.idempotency = { userId, key, replayHeaders: request.routeOptions.config.idempotencyReplayHeaders ?? [] };
      return;
    }
    reply.headers(outcome.headers);
    reply.header('idempotent-replayed', 'true');
    if (outcome.contentType) reply.type(outcome.contentType);
    return reply.status(outcome.statusCode).send(outcome.body === '' ? null : outcome.body);
  };

  const store: onSendHookHandler = async (request, reply, payload) => {
    const owned = request.idempotency;
    if (!owned) return payload;
    request.idempotency = null;
    if (payload === null || payload === undefined || typeof payload === 'string' || Buffer.isBuffer(payload)) {
      const body = payload === null || payload === undefined ? '' : payload.toString();
      const contentType = (reply.getHeader('content-type') as string | undefined) ?? null;
      await service.finish(owned.userId, owned.key, {
        statusCode: reply.statusCode,
        contentType,
        body,
        headers: pickHeaders(reply, owned.replayHeaders),
      });
    } else {
      await service.release(owned.userId, owned.key);
    }
    return payload;
  };

  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    if (!route.config.auth)
      throw new Error(`${route.method} ${route.url}: idempotent routes need authentication (keys are per user)`);
    const schema = route.schema ?? {};
    const response = schema.response as Record<string, unknown> | undefined;
    route.config = { ...route.config, idempotencyReplayHeaders: documentedSuccessHeaders(response) };
    route.schema = {
      ...schema,
      headers: withKeyHeader(schema.headers),
      ...(response
        ? { response: { ...response, ...withCodes(response, 'idempotency_in_progress', 'idempotency_mismatch') } }
        : {}),
    };
    const pre = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [begin, ...pre];
    const send = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : [];
    route.onSend = [...send, store];
  });
}

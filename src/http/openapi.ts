// OpenAPI 3.1 document generated from the route schemas, served at
// /api/openapi.json, with a docs UI at /api/docs.
//
// Routes declare their success answer (with a description and an example) and
// the error codes their service throws (`errorResponses(...)`). Everything a
// route's shape implies is added here, so new routes get it for free:
//   - a method with a body (POST, PUT, PATCH, DELETE), declared or not: 400
//     invalid_json, 413 payload_too_large, 415 unsupported_media_type
//   - any parameter or body: 400 invalid_input (validation, NUL refused)
//   - a path parameter: 414 uri_too_long (longer than the router accepts)
//   - `config.auth`: the security requirement, 401 unauthenticated, and 403
//     two_factor_required / phone_not_verified by level; a public route: `security: []`
//   - every operation: 503 not_ready (the database may be unreachable)
//   - fields of error answers (error-docs.ts `errorFields`, a route's `errorWith`),
//     Retry-After on answers that make the client wait, Idempotent-Replayed on
//     the successes of idempotent routes
// Each error answer is then written once: the status, a line per code, and an
// example per code. See docs/decisions/api-docs.md.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { docsUiOptions, productName } from './docs-ui.js';
import { describeCode, errorFields, requiredErrorFields } from './error-docs.js';
import { type ErrorCode, errorStatus } from './errors.js';

export const openapiInfo = {
  title: productName,
  version: '1.0.0',
  description: [
    'Account access, an end-to-end encrypted object store with change streams, telephony, knowledge, personas, integrations and billing.',
    '',
    'Authenticate with `Authorization: Bearer <token>`, where the token is a session JWT from sign-in or an API key (`wsk_…`); browsers may use the `token` cookie set at sign-in instead.',
    '',
    'Every error answers `{ message, code }` with a stable `code`; each operation lists the codes it can return.',
  ].join('\n'),
  // No `license`: package.json is private and names none, and "UNLICENSED" read as a licence in the docs UI.
};

/** Tags in the order the docs show them. Add yours when you add an area: the docs test fails for a tag without a description. */
export const openapiTags: Array<{ name: string; description: string }> = [
  {
    name: 'health',
    description: 'Liveness and database reachability, for load balancers and container health checks.',
  },
  {
    name: 'sandbox',
    description: 'What the sandbox providers sent instead of real email and SMS (development and tests only).',
  },
  {
    name: 'auth',
    description:
      'Accounts and sessions: register, sign in, phone verification, password reset, two-factor authentication, external (OpenID Connect) sign-in.',
  },
  {
    name: 'api-keys',
    description: 'Long-lived `wsk_` keys that authenticate like a session token, for servers and scripts.',
  },
  {
    name: 'data',
    description:
      'The end-to-end encrypted object store: root and server keys, objects, their children, and publishing.',
  },
  {
    name: 'events',
    description: 'A server-sent event stream of changes to your objects, with replay from `Last-Event-ID`.',
  },
  {
    name: 'connect',
    description:
      'Connector jobs: records streamed from a connector backend into your encrypted stores, with lead credits for `/get-leads`.',
  },
  {
    name: 'phone-numbers',
    description: 'Search, buy and manage phone numbers and the addresses regulated numbers need.',
  },
  {
    name: 'inbound-configurations',
    description: 'What answers a phone number: an agent, human agents and a campaign source, attached to your numbers.',
  },
  {
    name: 'sms',
    description: 'Outbound SMS from your numbers, with delivery status reported back by the telephony provider.',
  },
  {
    name: 'calls',
    description:
      'Calls: sessions started by a signed request and carried by the built-in voice agent (over Twilio or the sandbox carrier) or an external audio server, web calls from a browser, call records with transcripts and recordings, and temporary test calls.',
  },
  {
    name: 'analytics',
    description:
      "Post-call analysis and analytics: each ended call's summary, success, collected fields and tasks (by the configured model or the sandbox analyser), and the account's calls counted by day, agent, campaign, outcome or direction.",
  },
  {
    name: 'campaigns',
    description:
      "Campaigns: outbound calls to many contacts, paced and capped across every instance, within each contact's business hours, retried by outcome, up to a budget; and the do-not-call list every outbound call honours.",
  },
  {
    name: 'knowledge',
    description:
      'Knowledge bases: uploaded files and crawled pages, cut into passages and searched by full text and, when configured, embeddings.',
  },
  {
    name: 'pathways',
    description:
      'Conversational pathways: graphs of conversation, webhook, transfer, digits, SMS and end nodes that an agent walks during a call, checked before use.',
  },
  {
    name: 'agent-tests',
    description:
      "Agent tests: simulated conversations with an agent (scripted caller lines or a goal-driven caller) and what they must show (outcome, tool calls, phrases, pathway path and variables, analysis, limits), run as jobs in text mode through the agent's own turn logic, with results as JSON or JUnit XML.",
  },
  {
    name: 'personas',
    description: 'Voices for agents: the built-in catalog, external voices, and encrypted audio previews.',
  },
  {
    name: 'integrations',
    description: 'Scheduling integrations (Calendly) whose functions agents can call during a call.',
  },
  {
    name: 'billing',
    description: 'Credit balance and top-ups, plans, usage, the customer portal and per-country voice pricing.',
  },
  {
    name: 'webhooks',
    description:
      'Callbacks from payment, telephony and audio providers (signed), and the secret that signs the webhooks we send you.',
  },
];

const securitySchemes = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT or API key (wsk_…)',
    description: 'A session token from sign-in (`token` in the answer) or an API key from PUT /api/api-keys.',
  },
  cookieAuth: {
    type: 'apiKey',
    in: 'cookie',
    name: 'token',
    description: 'The HTTP-only `token` cookie set by sign-in, for browsers on the same site.',
  },
  eventTicket: {
    type: 'apiKey',
    in: 'query',
    name: 'ticket',
    description:
      'Event streams only: a ticket from POST /api/events/ticket, for EventSource in browser apps on other sites (it cannot send Authorization, and the cookie does not cross sites). Single use, valid 60 s, bound to the user and credential that asked for it.',
  },
};

/** The code documented for an error status a route declared without codes (`errors(404)`). */
const defaultCodeOf: Record<number, ErrorCode> = {
  400: 'invalid_input',
  401: 'unauthenticated',
  402: 'insufficient_funds',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'version_mismatch',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'idempotency_mismatch',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'provider_error',
  503: 'not_ready',
};

const statusName: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthenticated',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  408: 'Request timeout',
  409: 'Conflict',
  412: 'Precondition failed',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Too many requests',
  431: 'Headers too large',
  500: 'Internal error',
  502: 'Provider error',
  503: 'Not ready',
};

type Json = Record<string, any>;
const ERROR_REF = '#/components/schemas/ErrorResponse';
const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];
const BODY_METHODS = ['put', 'post', 'patch', 'delete', 'options'];

/** The codes an error response declares through its examples (errorResponses puts one per code). */
function declaredCodes(response: Json): string[] {
  const media = response?.content?.['application/json'];
  if (!media) return [];
  const values = [media.example, ...Object.values<Json>(media.examples ?? {}).map((e) => e?.value)];
  return values.map((v) => v?.code).filter((c): c is string => typeof c === 'string');
}

/** The example of one code's answer: its message and code, and the fields the code carries. */
function codeExample(code: string): Json {
  const fields = errorFields[code as ErrorCode] ?? {};
  return {
    message: describeCode(code),
    code,
    ...Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, f.example])),
  };
}

/**
 * The schema of an error answer: the shared ErrorResponse, or, when a code
 * carries fields (src/http/error-docs.ts `errorFields`, or a route's
 * `errorWith`), `{ message, code }` with those fields declared. A field is
 * required when every code of the answer always sends it.
 */
function errorSchema(codes: string[], own: Json = {}): Json {
  const properties: Json = { ...(own.properties ?? {}) };
  const counts = new Map<string, number>();
  for (const code of codes) {
    const fields = errorFields[code as ErrorCode] ?? {};
    for (const [name, field] of Object.entries(fields)) properties[name] = field.schema;
    for (const name of requiredErrorFields[code as ErrorCode] ?? []) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  delete properties.message;
  delete properties.code;
  if (Object.keys(properties).length === 0) return { $ref: ERROR_REF };
  const always = [...counts].filter(([, n]) => n === codes.length).map(([name]) => name);
  return {
    type: 'object',
    required: [...new Set(['message', 'code', ...always, ...(own.required ?? [])])],
    properties: {
      message: { type: 'string', description: 'Human-readable explanation' },
      code: {
        type: 'string',
        description: 'Stable machine-readable error code (those of this answer are listed above)',
      },
      ...properties,
    },
    additionalProperties: true,
    description: 'Error answer',
  };
}

function errorResponse(status: number, codes: string[]) {
  return {
    description: [
      `${statusName[status] ?? `Error ${status}`}.`,
      '',
      ...codes.map((c) => `- \`${c}\`: ${describeCode(c)}`),
    ].join('\n'),
    content: {
      'application/json': {
        schema: errorSchema(codes),
        examples: Object.fromEntries(
          codes.map((code) => [code, { summary: describeCode(code), value: codeExample(code) }]),
        ),
      },
    },
  };
}

/** An error answer of the route's own whose schema is `{ message, code, …fields }` (errorWith): merged with the codes' fields. */
const isErrorObject = (schema: Json | undefined) =>
  schema?.type === 'object' && schema.properties?.message && schema.properties?.code && !schema.$ref;

/** A media object whose schema is a shared one ($ref) shows that schema's example. */
function exampleFromComponent(media: Json | undefined, components: Json): void {
  const ref: unknown = media?.schema?.$ref;
  if (!media || media.example !== undefined || media.examples || typeof ref !== 'string') return;
  const example = components?.schemas?.[ref.replace('#/components/schemas/', '')]?.examples?.[0];
  if (example !== undefined) media.example = example;
}

/** Completes one operation's security and error answers from its shape (see the file comment). */
export function completeOperation(op: Json, components: Json = {}, method = 'post'): void {
  for (const response of Object.values<Json>(op.responses ?? {}))
    exampleFromComponent(response?.content?.['application/json'], components);
  const codes = new Map<number, Set<string>>();
  /** A declared code is documented under the status it was declared with (login answers invalid_credentials as 400). */
  const add = (code: string, status: number = errorStatus[code as ErrorCode] ?? 500) => {
    if (!codes.has(status)) codes.set(status, new Set());
    codes.get(status)!.add(code);
  };
  const responses: Json = op.responses ?? {};
  /** Error answers with a route's own shape (login's LoginFailure): kept, their codes added to them. */
  const ownShape = new Map<number, Json>();
  for (const [key, response] of Object.entries<Json>(responses)) {
    const status = Number(key);
    if (!(status >= 400)) continue;
    const schemaRef = response?.content?.['application/json']?.schema?.$ref;
    if (response.content && schemaRef !== ERROR_REF) ownShape.set(status, response);
    const declared = declaredCodes(response);
    if (declared.length) for (const code of declared) add(code, status);
    else
      add(
        defaultCodeOf[status] ??
          (Object.keys(errorStatus) as ErrorCode[]).find((c) => errorStatus[c] === status) ??
          'internal_error',
      );
    delete responses[key];
  }

  const params: Json[] = op.parameters ?? [];
  // @fastify/swagger drops a query parameter named like an apiKey security scheme: the stream's `ticket` is declared again.
  if (
    op.security?.some((r: Json) => 'eventTicket' in r) &&
    !params.some((p) => p.in === 'query' && p.name === 'ticket')
  ) {
    params.push({
      name: 'ticket',
      in: 'query',
      required: false,
      description: securitySchemes.eventTicket.description,
      schema: { type: 'string', maxLength: 4096 },
    });
    op.parameters = params;
  }
  const body = op.requestBody?.content;
  const bodySchema = body?.['application/json']?.schema;
  if (bodySchema?.['x-optional-body']) {
    delete bodySchema['x-optional-body'];
    op.requestBody.required = false;
  }
  // Fastify reads a body on these methods whether or not the route declares one.
  if (body || BODY_METHODS.includes(method)) {
    add('payload_too_large');
    add('unsupported_media_type');
    if (!body || body['application/json']) add('invalid_json');
  }
  if (body || BODY_METHODS.includes(method) || params.length) add('invalid_input');
  if (params.some((p) => p.in === 'path')) add('uri_too_long');

  // Any operation may find the database unreachable: 503 not_ready with Retry-After (error-handler.ts).
  add('not_ready');

  const level = op['x-auth-level'];
  delete op['x-auth-level'];
  const optional = op.security?.some((r: Json) => Object.keys(r).length === 0); // `{}`: credentials optional
  if (op.security?.length && !optional) {
    add('unauthenticated');
    if (level === 'user' || level === 'verified') add('two_factor_required');
    if (level === 'verified') add('phone_not_verified');
  } else if (!op.security) {
    op.security = [];
  }

  for (const [status, set] of codes) {
    const standard = errorResponse(status, [...set]);
    const own = ownShape.get(status);
    if (!own) {
      responses[status] = standard;
      continue;
    }
    const media = own.content?.['application/json'];
    if (isErrorObject(media?.schema)) media.schema = errorSchema([...set], media.schema);
    if (!media) {
      // A non-JSON answer of the route's own (an HTML page): keep it, name the codes.
      responses[status] = { ...own, description: `${own.description}\n\n${standard.description}` };
      continue;
    }
    // A code the route's own examples already show keeps that example: the standard { message, code } may not fit its shape.
    const shown = new Set(declaredCodes(own));
    const { example, examples } = media;
    delete media.example;
    const added = Object.entries<Json>(standard.content['application/json'].examples).filter(
      ([code]) => !shown.has(code),
    );
    media.examples = { ...(example ? { example: { value: example } } : {}), ...examples, ...Object.fromEntries(added) };
    responses[status] = { ...own, description: `${own.description}\n\n${standard.description}` };
  }
  declareHeaders(op, responses, codes);
  op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

const retryAfter = {
  description:
    'Seconds to wait before retrying (sent when the wait is known: rate limits, a busy idempotency key, an unreachable database, busy temporary numbers)',
  schema: { type: 'integer', minimum: 1 },
  example: 30,
};
const idempotentReplayed = {
  description:
    '`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key (nothing was done again)',
  schema: { type: 'string', enum: ['true'] },
  example: 'true',
};

/** Response headers implied by the codes and the shape: Retry-After on waits, Idempotent-Replayed on idempotent routes' successes. */
function declareHeaders(op: Json, responses: Json, codes: Map<number, Set<string>>): void {
  const waits = new Set([
    'rate_limited',
    'concurrency_limit',
    'voice_preview_quota_exceeded',
    'idempotency_in_progress',
    'not_ready',
    'numbers_busy',
  ]);
  for (const [status, set] of codes) {
    if ([...set].some((code) => waits.has(code)))
      responses[status].headers = { ...responses[status].headers, 'Retry-After': retryAfter };
  }
  const idempotent = (op.parameters ?? []).some((p: Json) => p.in === 'header' && p.name === 'idempotency-key');
  if (!idempotent) return;
  for (const [status, response] of Object.entries<Json>(responses)) {
    if (status.startsWith('2')) response.headers = { ...response.headers, 'Idempotent-Replayed': idempotentReplayed };
  }
}

/**
 * Keeps the codes a route declared with errorResponses in the document.
 * @fastify/swagger drops every keyword next to a `$ref`, so an error answer
 * `{ $ref: 'ErrorResponse', examples }` would lose its examples (its codes);
 * written in the response-object form (`content`), they survive the
 * conversion and completeOperation reads them. The route's own schema (its
 * serializer) is not changed: only the copy the document is made from.
 */
export function keepDeclaredCodes(schema: Json | undefined, components: Json = {}): Json | undefined {
  const response: Json | undefined = schema?.response;
  if (!response) return schema;
  const out: Json = {};
  for (const [status, entry] of Object.entries<Json>(response)) {
    const examples: unknown[] | undefined = entry?.examples;
    const inline = isErrorObject(entry);
    if (
      Number(status) >= 400 &&
      (typeof entry?.$ref === 'string' || inline) &&
      Array.isArray(examples) &&
      examples.length
    ) {
      const { examples: _examples, description: _description, headers, ...schema } = entry;
      out[status] = {
        // Still JSON Schema here: @fastify/swagger turns them into OpenAPI headers.
        ...(headers ? { headers } : {}),
        // What @fastify/swagger would have said: the answer's own description, else the shared schema's.
        description:
          entry.description ??
          components.schemas?.[entry.$ref]?.description ??
          statusName[Number(status)] ??
          'Error answer',
        content: {
          'application/json': {
            schema: inline ? schema : { $ref: entry.$ref },
            examples: Object.fromEntries(
              examples.map((value: any, i) => [
                typeof value?.code === 'string' ? value.code : `example${i + 1}`,
                { value },
              ]),
            ),
          },
        },
      };
    } else if (typeof entry?.$ref === 'string' && Array.isArray(examples) && examples.length) {
      // A success answer's own example, where the shared schema's would show another outcome (register answers phone_not_verified, not ok).
      out[status] = {
        description:
          entry.description ?? components.schemas?.[entry.$ref]?.description ?? statusName[Number(status)] ?? 'Answer',
        content: { 'application/json': { schema: { $ref: entry.$ref }, example: examples[0] } },
      };
    } else {
      out[status] = entry;
    }
  }
  return { ...schema, response: out };
}

/** The whole document: every operation completed, tags limited to those in use. */
export function completeDocument(doc: Json): Json {
  const used = new Set<string>();
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      completeOperation(op, doc.components, method);
      for (const tag of op.tags ?? []) used.add(tag);
    }
  }
  const known = openapiTags.filter((t) => used.has(t.name));
  const unknown = [...used].filter((name) => !openapiTags.some((t) => t.name === name)).map((name) => ({ name }));
  return {
    openapi: doc.openapi,
    info: doc.info,
    servers: doc.servers,
    security: [{ bearerAuth: [] }, { cookieAuth: [] }],
    tags: [...known, ...unknown],
    paths: doc.paths,
    components: doc.components,
    ...Object.fromEntries(
      Object.entries(doc).filter(
        ([k]) => !['openapi', 'info', 'servers', 'tags', 'paths', 'components', 'security'].includes(k),
      ),
    ),
  };
}

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: openapiInfo,
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: { securitySchemes: securitySchemes as any },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: (route) => ({
      schema: keepDeclaredCodes(
        route.schema as Json,
        (route as { openapiObject?: Json }).openapiObject?.components,
      ) as typeof route.schema,
      url: route.url,
    }),
    transformObject: (document) => completeDocument((document as { openapiObject: Json }).openapiObject) as any,
  });
  await app.register(swaggerUi, docsUiOptions);
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

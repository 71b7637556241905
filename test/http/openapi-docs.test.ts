// The OpenAPI document says what people need and what the server answers:
// every operation named, described and tagged, success answers named with an
// example, every error answer listing known codes, and the statuses a route's
// shape implies (400/413/414/415/401) declared. New routes join automatically.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMeaning } from '../../src/http/error-docs.js';
import { errorStatus } from '../../src/http/errors.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { bearer, registerUser } from '../support/factories.js';

type Json = Record<string, any>;
let t: TestApp;
let doc: Json;
const operations: Array<{ name: string; op: Json }> = [];

beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item))
      operations.push({ name: `${method.toUpperCase()} ${path}`, op });
  }
});
afterAll(() => t.close());

const mediaExamples = (media: Json | undefined) =>
  media
    ? [media.example, ...Object.values<Json>(media.examples ?? {}).map((e) => e.value)].filter((v) => v !== undefined)
    : [];

describe('the OpenAPI document', () => {
  it('has the product title and no licence, a server, the security schemes described and every tag described', () => {
    // The product's name, and no licence the owner never granted (package.json names none).
    expect(doc.info.title).toBe('Workspace API');
    expect(doc.info.license).toBeUndefined();
    expect(doc.servers.length).toBeGreaterThan(0);
    for (const scheme of Object.values<Json>(doc.components.securitySchemes)) expect(scheme.description).toBeTruthy();
    const described = new Map(doc.tags.map((tag: Json) => [tag.name, tag.description]));
    for (const { name, op } of operations)
      for (const tag of op.tags ?? [])
        expect(described.get(tag), `${name}: tag ${tag} needs a description in openapiTags`).toBeTruthy();
  });

  it('names, summarizes, describes and tags every operation, with unique operationIds', () => {
    const ids = new Set<string>();
    for (const { name, op } of operations) {
      expect(op.operationId, `${name}: operationId`).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(ids.has(op.operationId), `${name}: duplicate operationId ${op.operationId}`).toBe(false);
      ids.add(op.operationId);
      expect(op.summary, `${name}: summary`).toBeTruthy();
      expect(op.description, `${name}: description`).toBeTruthy();
      expect(op.tags?.length, `${name}: tags`).toBe(1);
    }
  });

  it('names every success answer and gives JSON bodies and answers an example', () => {
    for (const { name, op } of operations) {
      // A form post answered only by a redirect (the sandbox portal's buttons: 303) has that as its success answer; a WebSocket, 101.
      const success = Object.entries<Json>(op.responses).filter(
        ([status]) => status === '101' || status.startsWith('2') || status.startsWith('3'),
      );
      expect(success.length, `${name}: a success answer`).toBeGreaterThan(0);
      for (const [status, response] of success) {
        expect(response.description, `${name} ${status}`).not.toBe('Default Response');
        const json = response.content?.['application/json'];
        if (json) expect(mediaExamples(json).length, `${name} ${status}: example`).toBeGreaterThan(0);
      }
      const body = op.requestBody?.content?.['application/json'];
      if (body) expect(mediaExamples(body).length, `${name}: request example`).toBeGreaterThan(0);
    }
  });

  it('lists known codes with an example each on every error answer', () => {
    for (const { name, op } of operations) {
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (Number(status) < 400) continue;
        const codes = mediaExamples(response.content?.['application/json']).map((v) => v.code);
        expect(codes.length, `${name} ${status}: codes`).toBeGreaterThan(0);
        for (const code of codes) {
          expect(Object.keys(errorStatus), `${name} ${status}`).toContain(code);
          expect(response.description, `${name} ${status}`).toContain(`\`${code}\``);
        }
      }
    }
  });

  it('declares the statuses the route shape implies, and security: [] on public operations', () => {
    for (const { name, op } of operations) {
      const codesAt = (status: number) =>
        mediaExamples(op.responses[status]?.content?.['application/json']).map((v) => v.code);
      const params: Json[] = op.parameters ?? [];
      if (op.requestBody || /^(POST|PUT|PATCH|DELETE) /.test(name)) {
        expect(codesAt(413), name).toContain('payload_too_large');
        expect(codesAt(415), name).toContain('unsupported_media_type');
      }
      if (op.requestBody || /^(POST|PUT|PATCH|DELETE) /.test(name) || params.length)
        expect(codesAt(400), name).toContain('invalid_input');
      if (params.some((p) => p.in === 'path')) expect(codesAt(414), name).toContain('uri_too_long');
      expect(Array.isArray(op.security), `${name}: security`).toBe(true);
      const optional = op.security.some((s: Json) => Object.keys(s).length === 0);
      if (op.security.length && !optional) expect(codesAt(401), name).toContain('unauthenticated');
    }
    expect(doc.paths['/api/health'].get.security).toEqual([]);
    expect(doc.paths['/api/objects/{id}'].get.responses['403'].description).toContain('phone_not_verified');
  });

  it('says what every error code means (src/http/error-docs.ts)', () => {
    for (const code of Object.keys(errorStatus))
      expect(errorMeaning[code as keyof typeof errorMeaning], code).toBeTruthy();
  });

  it('passwords_mismatch names fields the bodies that can get it have (register, reset)', () => {
    const named = [...errorMeaning.passwords_mismatch!.matchAll(/\b([a-z]+[A-Z]\w*|password)\b/g)].map((m) => m[1]);
    expect(named).toEqual(['password', 'confirmPassword']);
    for (const path of ['/api/auth/register', '/api/auth/reset-password/submit']) {
      const op = doc.paths[path].post;
      expect(op.responses['400'].description, path).toContain('passwords_mismatch');
      const schema = op.requestBody.content['application/json'].schema;
      const properties = schema.properties ?? doc.components.schemas[schema.$ref?.split('/').at(-1)]?.properties;
      for (const field of named) expect(properties, `${path}: ${field}`).toHaveProperty(field);
    }
  });

  it('documents the codes a route declares with errorResponses, and the idempotency codes next to them', () => {
    const codesAt = (path: string, method: string, status: number) =>
      mediaExamples(doc.paths[path][method].responses[status]?.content?.['application/json']).map((v) => v.code);
    // @fastify/swagger drops keywords next to a $ref: these were lost before keepDeclaredCodes.
    expect(codesAt('/api/auth/verify/request', 'post', 400)).toEqual(
      expect.arrayContaining(['no_phone', 'provider_refused', 'invalid_input']),
    );
    expect(codesAt('/api/webhooks/twilio/sms/{id}', 'post', 400)).toContain('invalid_signature');
    expect(codesAt('/api/phone-numbers', 'put', 400)).toEqual(
      expect.arrayContaining(['invalid_token', 'provider_refused', 'invalid_input']),
    );
    // An idempotent route keeps its own 409 codes and gains idempotency_in_progress.
    expect(codesAt('/api/phone-numbers', 'put', 409)).toEqual(
      expect.arrayContaining(['payment_method_required', 'conflict', 'idempotency_in_progress']),
    );
    expect(codesAt('/api/phone-numbers', 'put', 422)).toEqual(['idempotency_mismatch']);
    expect(codesAt('/api/phone-numbers/search/{provider}', 'get', 404)).toEqual(['provider_not_found']);
  });

  it("declares the event stream's ticket query parameter beside its security scheme", () => {
    const stream = doc.paths['/api/events/{type}'].get;
    expect(stream.security).toEqual(expect.arrayContaining([{ eventTicket: [] }]));
    expect(stream.parameters.find((p: Json) => p.name === 'ticket')).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'string' },
    });
  });

  it('marks as optional what the server does not require (login remember, outbox limit)', () => {
    const login = doc.paths['/api/auth/login'].post.requestBody.content['application/json'].schema;
    expect(login.required).not.toContain('remember');
    const outbox = doc.paths['/api/sandbox/outbox'].get.parameters.find((p: Json) => p.name === 'limit');
    expect(outbox.required).toBe(false);
    // A default makes a parameter optional: number search, SMS list, webhook deliveries.
    for (const [path, method] of [
      ['/api/phone-numbers/search/{provider}', 'get'],
      ['/api/sms/messages', 'get'],
      ['/api/webhooks/deliveries', 'get'],
    ]) {
      const limit = doc.paths[path][method].parameters.find((p: Json) => p.name === 'limit');
      expect([path, limit.required, limit.schema.default !== undefined]).toEqual([path, false, true]);
    }
  });

  it('documents that POST /api/auth/verify/request needs no body, and the server takes one without', async () => {
    expect(doc.paths['/api/auth/verify/request'].post.requestBody.required).toBe(false);
    const user = await registerUser(t);
    const res = await t.app.inject({ method: 'POST', url: '/api/auth/verify/request', headers: bearer(user.token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('sent');
  });
});

describe('documented answers are the real ones', () => {
  it('register: the 200 example has the shape and outcome of a real sign-up (phone_not_verified, phone not verified)', async () => {
    const media = doc.paths['/api/auth/register'].post.responses['200'].content['application/json'];
    const [example] = mediaExamples(media);
    const real = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: {
        firstName: 'Ada',
        lastName: 'Lovelace',
        email: 'ada.docs@example.com',
        phone: '+14155550123',
        password: 'correct horse battery staple',
        confirmPassword: 'correct horse battery staple',
      },
    });
    expect(real.statusCode).toBe(200);
    const answer = real.json();
    const shape = (v: Json) => ({
      keys: Object.keys(v).sort(),
      auth: Object.keys(v.auth).sort(),
      status: v.status,
      flags: [v.auth.phoneVerified, v.auth.twoFactorPassed, v.auth.twoFactorConfigured],
    });
    expect(shape(example)).toEqual(shape(answer));
    expect(example.status).toBe('phone_not_verified');
  });
});

// Hostile and malformed requests: every answer keeps { message, code } with a
// 4xx, on SQLite and PostgreSQL alike.
import { once } from 'node:events';
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsNul } from '../../src/http/input-guard.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../support/factories.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await createVerifiedUser(t);
});
afterAll(() => t.close());

describe('NUL characters', () => {
  it('are refused with 400 invalid_input in a path parameter, a query string, a body value and a body key', async () => {
    const requests = [
      { method: 'GET', url: '/api/objects/%00' },
      { method: 'GET', url: '/api/objects/a%00b/related' },
      { method: 'DELETE', url: '/api/api-keys/%00' },
      { method: 'GET', url: '/api/objects/x/related?after=%00' },
      { method: 'GET', url: '/api/events/all?object_id=a%00' },
      { method: 'PUT', url: '/api/api-keys', payload: { name: 'a\u0000b' } },
      { method: 'PUT', url: '/api/objects', payload: { type: 'calls', data: 'aa', 'k\u0000': 1 } },
    ] as const;
    for (const r of requests) {
      const res = await t.app.inject({ ...r, headers: bearer(user.token) });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(400);
      expect(res.json(), `${r.method} ${r.url}`).toEqual({
        message: expect.stringContaining('NUL'),
        code: 'invalid_input',
      });
    }
  });

  it('are found in nested values and keys, not in buffers, and cycles end the walk', () => {
    expect(holdsNul({ a: [{ b: 'x\u0000' }] })).toBe(true);
    expect(holdsNul({ a: { 'x\u0000': 1 } })).toBe(true);
    expect(holdsNul(Buffer.from([0, 0]))).toBe(false);
    expect(holdsNul(Object.assign(Object.create(Object.create(null)), { id: '\u0000' }))).toBe(true);
    const cyclic: Record<string, unknown> = { a: 'ok' };
    cyclic.self = cyclic;
    expect(holdsNul(cyclic)).toBe(false);
    expect(holdsNul(Array.from({ length: 300_000 }, () => 'x'))).toBe(false);
  });
});

/** Sends raw bytes to the listening app and returns what came back before the server closed or answered. */
async function raw(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  const address = t.app.server.address() as AddressInfo;
  const socket = connect(address.port, '127.0.0.1');
  socket.setEncoding('utf8');
  let text = '';
  socket.on('data', (chunk: string) => {
    text += chunk;
    const split = text.indexOf('\r\n\r\n');
    const length = /content-length: (\d+)/i.exec(text)?.[1];
    if (split >= 0 && length && text.length >= split + 4 + Number(length)) socket.end();
  });
  socket.write(bytes);
  await once(socket, 'close');
  const split = text.indexOf('\r\n\r\n');
  return { status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: text.slice(split + 4) };
}

const expectError = (body: unknown, code: string) => expect(body).toEqual({ message: expect.any(String), code });

describe('framework and Node errors keep { message, code } and never echo the request', () => {
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('answers headers too large with 431 headers_too_large', async () => {
    const res = await raw(`GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expectError(JSON.parse(res.body), 'headers_too_large');
  });

  it('answers malformed HTTP with 400 invalid_input', async () => {
    for (const bytes of [
      'NOT HTTP AT ALL\r\n\r\n',
      'GET /api/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n',
    ]) {
      const res = await raw(bytes);
      expect(res.status, bytes).toBe(400);
      expectError(JSON.parse(res.body), 'invalid_input');
    }
  });

  it('answers an unrouted method with 404 route_not_found', async () => {
    const res = await raw('PROPFIND /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(404);
    expectError(JSON.parse(res.body), 'route_not_found');
  });

  it('answers a URL that does not decode with 400 invalid_input, without the URL', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/objects/%E0%A4%A', headers: bearer(user.token) });
    expect(res.statusCode).toBe(400);
    expectError(res.json(), 'invalid_input');
    expect(res.body).not.toContain('%E0');
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('answers a path parameter over the router limit with 414 uri_too_long, without the URL', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/objects/${'x'.repeat(300)}`,
      headers: bearer(user.token),
    });
    expect(res.statusCode).toBe(414);
    expectError(res.json(), 'uri_too_long');
    expect(res.body).not.toContain('xxxxxxxxxx');
  });

  it('answers an unsupported content type with 415 without echoing it', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'text/x-secret-probe' },
      payload: 'a',
    });
    expect(res.statusCode).toBe(415);
    expectError(res.json(), 'unsupported_media_type');
    expect(res.body).not.toContain('secret-probe');
  });

  it('answers a wrong content-length with 400 invalid_input', async () => {
    const res = await raw(
      'PUT /api/api-keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    );
    expect(res.status).toBe(400);
    expectError(JSON.parse(res.body), 'invalid_input');
  });
});

describe('JSON bodies', () => {
  it('refuse prototype poisoning: __proto__ (also escaped) and constructor.prototype, at any depth', async () => {
    for (const payload of [
      '{"name":"k","__proto__":{"admin":true}}',
      '{"name":"k","\\u005f_proto__":{"admin":true}}',
      '{"name":"k","constructor":{"prototype":{"admin":true}}}',
      '{"name":"k","x":[{"__proto__":{}}]}',
    ]) {
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/api-keys',
        headers: { ...bearer(user.token), 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json(), payload).toEqual({ message: expect.stringContaining('__proto__'), code: 'invalid_input' });
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('still read an empty body as no body and refuse broken JSON with invalid_json', async () => {
    const empty = await t.app.inject({
      method: 'GET',
      url: '/api/auth',
      headers: { ...bearer(user.token), 'content-type': 'application/json' },
      payload: '',
    });
    expect(empty.statusCode).toBe(200);
    const broken = await t.app.inject({
      method: 'PUT',
      url: '/api/api-keys',
      headers: { ...bearer(user.token), 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(broken.statusCode).toBe(400);
    expectError(broken.json(), 'invalid_json');
  });
});

describe('API key names', () => {
  it('are trimmed before they are checked: a name of spaces is refused, not stored empty', async () => {
    for (const name of ['   ', '\t\n', '\u00a0\u2003']) {
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/api-keys',
        headers: bearer(user.token),
        payload: { name },
      });
      expect(res.statusCode, JSON.stringify(name)).toBe(400);
      expectError(res.json(), 'invalid_input');
    }
    await expect(
      t.services.apiKeys.apiKeys.create(user.id, '  ', { ip: '127.0.0.1', userAgent: null }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
    });
    const ok = await t.app.inject({
      method: 'PUT',
      url: '/api/api-keys',
      headers: bearer(user.token),
      payload: { name: '  deploy  ' },
    });
    expect(ok.json().name).toBe('deploy');
  });
});

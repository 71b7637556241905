import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { bodyLimitBytes: 4096 } });
});
afterAll(() => t.close());

describe('foundation', () => {
  it('points the bare address at the docs: a browser is redirected, a program gets the addresses', async () => {
    const browser = await t.app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html,application/xhtml+xml' },
    });
    expect(browser.statusCode).toBe(302);
    expect(browser.headers.location).toBe('/api/docs');
    const program = await t.app.inject({ method: 'GET', url: '/' });
    expect(program.statusCode).toBe(200);
    expect(program.json()).toEqual({ docs: '/api/docs', openapi: '/api/openapi.json', health: '/api/health' });
    expect((await t.app.inject({ method: 'GET', url: program.json().docs })).statusCode).toBeLessThan(400);
  });

  it('answers health with the database dialect', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', database: process.env.DATABASE_URL ? 'postgres' : 'sqlite' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers an unknown route with 404 { message, code }', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/no-such-route' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ message: 'no route GET /api/no-such-route', code: 'route_not_found' });
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_json' });
  });

  it('answers a wrong type and a missing field with 400 invalid_input naming the field', async () => {
    const wrongType = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'a@example.com', password: 5, remember: false },
    });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().code).toBe('invalid_input');
    expect(wrongType.json().message).toContain('password');
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { password: 'x', remember: false },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toContain('email');
  });

  it('answers an oversized body with 413 payload_too_large', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'a@example.com', password: 'x'.repeat(8000), remember: false },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large' });
  });

  it('answers an unsupported content type with 415', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'text/xml' },
      payload: '<a/>',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
  });

  it('serves an OpenAPI 3.1 document with the bearer scheme and a docs UI', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/auth/login'].post.responses['200']).toBeDefined();
    expect(doc.paths['/api/api-keys/{id}'].delete.security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }]);
    const ui = await t.app.inject({ method: 'GET', url: '/api/docs/' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toContain('text/html');
    // The product's name and mark, not the stock "Swagger UI" and framework logo.
    expect(ui.body).toContain('<title>Workspace API reference</title>');
    expect(ui.body).not.toContain('Swagger UI</title>');
    expect(ui.body).toContain('href="./static/theme/favicon.svg"');
    const favicon = await t.app.inject({ method: 'GET', url: '/api/docs/static/theme/favicon.svg' });
    expect(favicon.headers['content-type']).toContain('image/svg+xml');
    const initializer = await t.app.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    const logo = initializer.body.match(/data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/);
    expect(Buffer.from(logo?.[1] ?? '', 'base64').toString()).toContain('>Workspace API</text>');
  });
});

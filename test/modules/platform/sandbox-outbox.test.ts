// The sandbox outbox answers without credentials and holds codes and reset
// links: it must never be served in production, and must say what it holds.
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../../support/app.js';
import { registerUser } from '../../support/factories.js';

describe('GET /api/sandbox/outbox', () => {
  it('is not served in production, even with ALLOW_SANDBOX=1, and is not in the OpenAPI document there', async () => {
    const t = await createTestApp({
      env: { NODE_ENV: 'production', ALLOW_SANDBOX: '1', PUBLIC_URL: 'https://api.example.com' },
    });
    try {
      expect(t.config.env).toBe('production');
      const user = await registerUser(t);
      await t.app.inject({ method: 'POST', url: '/api/auth/reset-password/request', payload: { email: user.email } });
      await t.services.auth.passwordReset.drain();
      for (const url of ['/api/sandbox/outbox', `/api/sandbox/outbox?to=${encodeURIComponent(user.email)}`]) {
        const res = await t.app.inject({ method: 'GET', url });
        expect(res.statusCode, url).toBe(404);
        expect(res.body).not.toContain('token');
      }
      const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
      expect(doc.paths['/api/sandbox/outbox']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('outside production, is documented as holding secrets (OpenAPI description)', async () => {
    const t = await createTestApp();
    try {
      const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
      const description: string = doc.paths['/api/sandbox/outbox'].get.description;
      expect(description).toContain('holds secrets');
      expect(description).toMatch(/reset tokens/);
      expect(description).toContain('never in production, even with ALLOW_SANDBOX=1');
      expect((await t.app.inject({ method: 'GET', url: '/api/sandbox/outbox' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

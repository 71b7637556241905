// Media-stream tokens: bound to session, owner and transport, 60 s, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaTokens } from '../../../src/modules/calls/media-tokens.js';
import { type TestApp, createTestApp } from '../../support/app.js';

let t: TestApp;
let tokens: MediaTokens;
beforeAll(async () => {
  t = await createTestApp();
  tokens = new MediaTokens(t.services.data.serviceTokens, t.services.singleUse);
});
afterAll(() => t.close());

const code = (p: Promise<unknown>) => p.then(() => 'accepted', (e: { code?: string }) => e.code);

describe('media tokens', () => {
  it('opens its session once', async () => {
    const { token, expiresAt } = await tokens.issue('user-1', 'session-1', 'twilio');
    expect(expiresAt - t.clock.now()).toBeLessThanOrEqual(60_000);
    await expect(tokens.accept(token, 'twilio')).resolves.toEqual({ userId: 'user-1', sessionId: 'session-1' });
    expect(await code(tokens.accept(token, 'twilio'))).toBe('invalid_token');
  });

  it('is accepted by one of two concurrent connections', async () => {
    const { token } = await tokens.issue('user-1', 'session-2', 'twilio');
    const results = await Promise.all(Array.from({ length: 5 }, () => code(tokens.accept(token, 'twilio'))));
    expect(results.filter((r) => r === 'accepted')).toHaveLength(1);
  });

  it('refuses another transport, expiry, tampering and garbage', async () => {
    const web = await tokens.issue('user-1', 'session-3', 'web');
    expect(await code(tokens.accept(web.token, 'twilio'))).toBe('invalid_token');
    const late = await tokens.issue('user-1', 'session-4', 'twilio');
    t.clock.advance(61_000);
    expect(await code(tokens.accept(late.token, 'twilio'))).toBe('invalid_token');
    const fresh = await tokens.issue('user-1', 'session-5', 'twilio');
    const [h, p, s] = fresh.token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sid: 'someone-elses' })).toString('base64url')}.${s}`;
    expect(await code(tokens.accept(forged, 'twilio'))).toBe('invalid_token');
    expect(await code(tokens.accept('not-a-token', 'twilio'))).toBe('invalid_token');
    await expect(tokens.accept(fresh.token, 'twilio')).resolves.toEqual({ userId: 'user-1', sessionId: 'session-5' });
  });
});

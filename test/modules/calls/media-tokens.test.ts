// Media-stream tokens: bound to session, owner and transport, 60 s, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaTokens } from '../../../src/modules/voice-agent/media-tokens.js';
import { type TestApp, createTestApp } from '../../support/app.js';

let t: TestApp;
let tokens: MediaTokens;
beforeAll(async () => {
  t = await createTestApp();
  tokens = new MediaTokens(t.services.data.serviceTokens, t.services.platform.singleUse);
});
afterAll(() => t.close());

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: { code?: string }) => e.code,
  );
/** A Twilio stream naming the call its session is for (here: every session's call is CA1). */
const ownCall = { callSid: 'CA1', callOf: async () => 'CA1' };

describe('media tokens', () => {
  it('opens its session once', async () => {
    const { token, expiresAt } = await tokens.issue('user-1', 'session-1', 'twilio');
    expect(expiresAt - t.clock.now()).toBeLessThanOrEqual(60_000);
    await expect(tokens.accept(token, 'twilio', ownCall)).resolves.toEqual({
      userId: 'user-1',
      sessionId: 'session-1',
    });
    expect(await code(tokens.accept(token, 'twilio', ownCall))).toBe('invalid_token');
  });

  it('is accepted by one of two concurrent connections', async () => {
    const { token } = await tokens.issue('user-1', 'session-2', 'twilio');
    const results = await Promise.all(Array.from({ length: 5 }, () => code(tokens.accept(token, 'twilio', ownCall))));
    expect(results.filter((r) => r === 'accepted')).toHaveLength(1);
  });

  it('refuses another transport, expiry, tampering and garbage', async () => {
    const web = await tokens.issue('user-1', 'session-3', 'web');
    expect(await code(tokens.accept(web.token, 'twilio', ownCall))).toBe('invalid_token');
    const late = await tokens.issue('user-1', 'session-4', 'twilio');
    t.clock.advance(61_000);
    expect(await code(tokens.accept(late.token, 'twilio', ownCall))).toBe('invalid_token');
    const fresh = await tokens.issue('user-1', 'session-5', 'twilio');
    const [h, p, s] = fresh.token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sid: 'someone-elses' })).toString('base64url')}.${s}`;
    expect(await code(tokens.accept(forged, 'twilio', ownCall))).toBe('invalid_token');
    expect(await code(tokens.accept('not-a-token', 'twilio', ownCall))).toBe('invalid_token');
    await expect(tokens.accept(fresh.token, 'twilio', ownCall)).resolves.toEqual({
      userId: 'user-1',
      sessionId: 'session-5',
    });
  });

  it("a Twilio stream is bound to its session's carrier call: another CallSid is refused and does not spend the token", async () => {
    const { token } = await tokens.issue('user-1', 'session-6', 'twilio');
    const calls: Record<string, string | null> = { 'session-6': 'CAmine' };
    const callOf = async (sessionId: string) => calls[sessionId] ?? null;
    expect(await code(tokens.accept(token, 'twilio', { callSid: 'CAsomeone-elses', callOf }))).toBe('invalid_token');
    await expect(tokens.accept(token, 'twilio', { callSid: 'CAsomeone-elses', callOf })).rejects.toThrow(
      'another call',
    );
    // The carrier's own stream can still use it.
    await expect(tokens.accept(token, 'twilio', { callSid: 'CAmine', callOf })).resolves.toEqual({
      userId: 'user-1',
      sessionId: 'session-6',
    });
  });

  it("waits briefly for an outbound session's call id (stored once Calls.json answers), and refuses a session that has none", async () => {
    const { token } = await tokens.issue('user-1', 'session-7', 'twilio');
    let stored: string | null = null;
    setTimeout(() => (stored = 'CAlater'), 150);
    await expect(
      tokens.accept(token, 'twilio', { callSid: 'CAlater', callOf: async () => stored }),
    ).resolves.toMatchObject({ sessionId: 'session-7' });
    const never = await tokens.issue('user-1', 'session-8', 'twilio');
    expect(await code(tokens.accept(never.token, 'twilio', { callSid: 'CA1', callOf: async () => null }))).toBe(
      'invalid_token',
    );
  });
});

// The Twilio SMS adapter against a local server speaking Twilio's Messages API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { TwilioSmsProvider } from '../../src/providers/sms/twilio.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { bearer, registerUser } from '../support/factories.js';
import { type TwilioFake, startTwilioFake } from '../support/twilio-fake.js';

let fake: TwilioFake;
beforeAll(async () => {
  fake = await startTwilioFake();
});
afterAll(() => fake.close());

const provider = (overrides: Partial<{ accountSid: string; authToken: string; from: string; apiBase: string }> = {}) =>
  new TwilioSmsProvider({
    accountSid: fake.accountSid,
    authToken: fake.authToken,
    from: fake.from,
    apiBase: fake.apiBase,
    ...overrides,
  });

async function sendError(p: TwilioSmsProvider): Promise<AppError> {
  const err = await p.send({ to: '+14155550123', body: 'hello' }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('TwilioSmsProvider', () => {
  it('posts a form-encoded message with Basic auth and returns the message sid and status', async () => {
    const before = fake.requests.length;
    const result = await provider().send({
      to: '+14155550123',
      body: 'Your code is 123456',
      statusCallbackUrl: 'https://api.example.com/sms/status',
    });
    expect(result.id).toMatch(/^SM[0-9a-f]{32}$/);
    expect(result.status).toBe('queued');

    const request = fake.requests[before];
    expect(request).toEqual({
      method: 'POST',
      path: `/2010-04-01/Accounts/${fake.accountSid}/Messages.json`,
      contentType: expect.stringMatching(/^application\/x-www-form-urlencoded/),
      auth: { user: fake.accountSid, password: fake.authToken },
      form: {
        To: '+14155550123',
        From: fake.from,
        Body: 'Your code is 123456',
        StatusCallback: 'https://api.example.com/sms/status',
      },
    });
    expect(fake.messages.at(-1)).toMatchObject({
      sid: result.id,
      to: '+14155550123',
      from: fake.from,
      body: 'Your code is 123456',
    });
  });

  it('sends from the number given on the message instead of the configured one', async () => {
    await provider().send({ to: '+14155550123', body: 'hi', from: '+15005550001' });
    expect(fake.requests.at(-1)!.form).toEqual({ To: '+14155550123', From: '+15005550001', Body: 'hi' });
  });

  it('turns a 401 for a wrong auth token into provider_error (502)', async () => {
    const before = fake.messages.length;
    const err = await sendError(provider({ authToken: 'wrong' }));
    expect(err).toMatchObject({ code: 'provider_error', status: 502 });
    expect(err.message).toContain('Authenticate');
    expect(fake.messages).toHaveLength(before);
  });

  it('turns a 400 from Twilio into provider_error carrying its message', async () => {
    fake.failNext();
    const err = await sendError(provider());
    expect(err.code).toBe('provider_error');
    expect(err.message).toContain('is not a valid phone number');
  });

  it('reports an unreachable API as provider_error', async () => {
    const gone = await startTwilioFake();
    await gone.close();
    const err = await sendError(provider({ apiBase: gone.apiBase }));
    expect(err.code).toBe('provider_error');
    expect(err.message).toContain('unreachable');
  });
});

describe('phone verification through Twilio', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      config: {
        twilio: { accountSid: fake.accountSid, authToken: fake.authToken, from: fake.from, apiBase: fake.apiBase },
      },
    });
  });
  afterAll(() => t.close());

  const request = (token: string) =>
    t.app.inject({ method: 'POST', url: '/api/auth/verify/request', headers: bearer(token) });
  const submit = (token: string, code: string) =>
    t.app.inject({ method: 'POST', url: '/api/auth/verify/submit', headers: bearer(token), payload: { code } });

  it('uses the real provider, not the sandbox', () => {
    expect(t.services.providers.sms).toBeInstanceOf(TwilioSmsProvider);
  });

  it('texts the code through Twilio and verifies the phone with it', async () => {
    const user = await registerUser(t);
    const res = await request(user.token);
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('sent');

    const message = fake.messages.at(-1)!;
    expect(message).toMatchObject({ to: user.phone, from: fake.from });
    const code = /\b(\d{6})\b/.exec(message.body)?.[1];
    expect(code).toBeDefined();
    // Nothing lands in the sandbox outbox when the SMS provider is real.
    expect(await t.services.platform.outbox.list(user.phone)).toEqual([]);

    const done = await submit(user.token, code!);
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ status: 'ok', auth: { phoneVerified: true } });
  });

  it('answers 502 provider_error when Twilio refuses, and keeps no code', async () => {
    const user = await registerUser(t);
    fake.failNext();
    const res = await request(user.token);
    expect(res.statusCode).toBe(502);
    expect(res.json().code).toBe('provider_error');
    const rows = await t.database.db.selectFrom('phone_codes').selectAll().where('user_id', '=', user.id).execute();
    expect(rows).toEqual([]);
    expect(
      (await t.services.platform.audit.listForUser(user.id)).map((e) => `${e.action}:${Number(e.success)}`),
    ).toContain('phone.verify_request:0');
  });
});

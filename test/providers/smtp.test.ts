// The SMTP email adapter (nodemailer) against a real local SMTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { SmtpEmailProvider } from '../../src/providers/email/smtp.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { registerUser } from '../support/factories.js';
import { type SmtpFake, startSmtpFake } from '../support/smtp-fake.js';

const FROM = 'Workspace <no-reply@workspace.test>';

let smtp: SmtpFake;
beforeAll(async () => {
  smtp = await startSmtpFake();
});
afterAll(() => smtp.close());

describe('SmtpEmailProvider', () => {
  it('delivers a message with its envelope, headers and text', async () => {
    const provider = new SmtpEmailProvider(smtp.url, FROM);
    try {
      const before = smtp.messages.length;
      const text = `Line one.\n\nA long link: https://app.example.com/reset-password?token=${'x'.repeat(80)}\n`;
      const result = await provider.send({ to: 'ada@example.com', subject: 'Hello there', text });
      expect(result.id).toMatch(/^<.+@.+>$/);
      const [mail] = (await smtp.waitFor(before + 1)).slice(before);
      expect(mail).toMatchObject({
        mailFrom: 'no-reply@workspace.test',
        rcptTo: ['ada@example.com'],
        to: 'ada@example.com',
        subject: 'Hello there',
      });
      expect(mail.from).toContain('no-reply@workspace.test');
      expect(mail.headers['message-id']).toBe(result.id);
      expect(mail.text.replace(/\r\n/g, '\n')).toBe(text);
    } finally {
      provider.close();
    }
  });

  it('turns a refused message into provider_error (502)', async () => {
    const provider = new SmtpEmailProvider(smtp.url, FROM);
    try {
      smtp.refuseNext();
      const err = await provider.send({ to: 'ada@example.com', subject: 's', text: 't' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'provider_error', status: 502 });
      expect((err as AppError).message).toContain('mailbox unavailable');
    } finally {
      provider.close();
    }
  });
});

describe('password reset email through SMTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { smtp: { url: smtp.url, from: FROM } } });
  });
  afterAll(() => t.close());

  const requestReset = (email: string) =>
    t.app.inject({ method: 'POST', url: '/api/auth/reset-password/request', payload: { email } });

  it('uses the real provider, not the sandbox', () => {
    expect(t.services.providers.email).toBeInstanceOf(SmtpEmailProvider);
  });

  it('mails the link, and the token in it resets the password', async () => {
    const user = await registerUser(t);
    const before = smtp.messages.length;
    const res = await requestReset(user.email);
    expect(res.statusCode).toBe(200);
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    expect(mail).toMatchObject({ to: user.email, rcptTo: [user.email], subject: 'Reset your Workspace password' });

    const link = /(http:\/\/127\.0\.0\.1:3000\/reset-password\?token=[A-Za-z0-9_-]{43})\s/.exec(mail.text)?.[1];
    expect(link).toBeDefined();
    const token = new URL(link!).searchParams.get('token')!;
    const done = await t.app.inject({
      method: 'POST',
      url: '/api/auth/reset-password/submit',
      payload: { token, password: 'emailed new passphrase', confirmPassword: 'emailed new passphrase' },
    });
    expect(done.statusCode).toBe(200);
    expect(done.json().status).toBe('phone_not_verified');
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: user.email, password: 'emailed new passphrase', remember: false },
    });
    expect(login.statusCode).toBe(200);
  });

  it('sends nothing for an unknown email, with the same answer', async () => {
    const user = await registerUser(t);
    const before = smtp.messages.length;
    const known = await requestReset(user.email);
    const unknown = await requestReset('nobody@example.com');
    expect(unknown.json()).toEqual(known.json());
    await smtp.waitFor(before + 1);
    await t.services.auth.passwordReset.drain();
    expect(smtp.messages.slice(before).map((m) => m.to)).toEqual([user.email]);
  });

  it('still answers 200 when the SMTP server refuses the message', async () => {
    const user = await registerUser(t);
    const before = smtp.messages.length;
    smtp.refuseNext();
    const res = await requestReset(user.email);
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('requested');
    await t.services.auth.passwordReset.drain();
    expect(smtp.messages).toHaveLength(before);
  });
});

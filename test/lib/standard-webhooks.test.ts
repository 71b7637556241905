// Our Standard Webhooks signer and verifier against the official
// `standardwebhooks` package as the oracle, both ways, and forgeries.
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  TOLERANCE_SECONDS,
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
} from '../../src/lib/standard-webhooks.js';

const body = JSON.stringify({
  type: 'call_status',
  timestamp: '2026-11-23T10:00:00.000Z',
  data: { session_id: 's1', status: 'ringing' },
});

describe('Standard Webhooks', () => {
  it('signs messages the official library accepts, for any id and body', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/[\s,]/.test(s)),
        fc.string(),
        (id, text) => {
          const secret = generateWebhookSecret();
          const headers = signWebhook([secret], id, Date.now(), text);
          expect(() => new Webhook(secret).verify(text, { ...headers }, { jsonParse: false })).not.toThrow();
          expect(headers['webhook-signature']).toBe(
            new Webhook(secret).sign(id, new Date(Number(headers['webhook-timestamp']) * 1000), text),
          );
        },
      ),
      { numRuns: 50 },
    );
  });

  it('verifies what the official library signs, and returns the message id', () => {
    const secret = generateWebhookSecret();
    const now = Date.now();
    const signatureHeader = new Webhook(secret).sign('msg_1', new Date(now), body);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(now / 1000)),
      'webhook-signature': signatureHeader,
    };
    expect(verifyWebhook(secret, headers, Buffer.from(body), now)).toBe('msg_1');
  });

  it('signs with several secrets (rotation): the library accepts each of them alone', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = signWebhook([current, previous], 'msg_2', Date.now(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [current, previous])
      expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers })).toThrow();
  });

  it('refuses a changed body, id or timestamp, another secret, and missing headers', () => {
    const secret = generateWebhookSecret();
    const now = Date.now();
    const headers = signWebhook([secret], 'msg_3', now, body);
    expect(verifyWebhook(secret, headers, body, now)).toBe('msg_3');
    expect(() => verifyWebhook(secret, headers, body.replace('ringing', 'completed'), now)).toThrow(
      /no matching signature/,
    );
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_4' }, body, now)).toThrow(
      /no matching signature/,
    );
    expect(() =>
      verifyWebhook(
        secret,
        { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) },
        body,
        now,
      ),
    ).toThrow(/no matching signature/);
    expect(() => verifyWebhook(generateWebhookSecret(), headers, body, now)).toThrow(/no matching signature/);
    expect(() =>
      verifyWebhook(
        secret,
        { ...headers, 'webhook-signature': `v2,${headers['webhook-signature'].slice(3)}` },
        body,
        now,
      ),
    ).toThrow(/no matching signature/);
    expect(() =>
      verifyWebhook(secret, { 'webhook-id': 'msg_3', 'webhook-timestamp': headers['webhook-timestamp'] }, body, now),
    ).toThrow(/missing/);
  });

  it('refuses timestamps outside five minutes either way (replays of old messages)', () => {
    const secret = generateWebhookSecret();
    const now = Date.now();
    const old = signWebhook([secret], 'msg_5', now - (TOLERANCE_SECONDS + 2) * 1000, body);
    const future = signWebhook([secret], 'msg_6', now + (TOLERANCE_SECONDS + 2) * 1000, body);
    expect(() => verifyWebhook(secret, old, body, now)).toThrow(/tolerance/);
    expect(() => verifyWebhook(secret, future, body, now)).toThrow(/tolerance/);
    // The oracle agrees.
    expect(() => new Webhook(secret).verify(body, { ...old })).toThrow(/too old/);
    expect(verifyWebhook(secret, signWebhook([secret], 'msg_7', now - 60_000, body), body, now)).toBe('msg_7');
  });
});

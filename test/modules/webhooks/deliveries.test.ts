// Outbound webhooks: the secret routes, signed deliveries (checked with the
// official standardwebhooks package), retries, timeouts, the 24 h limit,
// restarts and several instances sharing one queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_WINDOW_MS, retryDelayMs } from '../../../src/modules/webhooks/worker.js';
import { OutboundHttpError } from '../../../src/lib/outbound-http.js';
import { createWebhookSender } from '../../../src/modules/webhooks/send.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, registerUser } from '../../support/factories.js';
import { type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';
import { eventually } from '../events/support.js';
import { deliveryRow, enqueue, verifyWithOracle, webhookApp } from './support.js';

let t: TestApp;
let receiver: WebhookReceiver;
beforeAll(async () => {
  t = await webhookApp();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function secretOf(app: TestApp, token: string): Promise<string> {
  const res = await app.app.inject({ method: 'GET', url: '/api/webhooks/secret', headers: bearer(token) });
  expect(res.statusCode).toBe(200);
  return res.json().secret;
}

const data = (n: number) => ({ session_id: `s${n}`, status: 'ringing', at: '2026-11-23T10:00:00.000Z' });

describe('GET /api/webhooks/secret and rotation', () => {
  it('needs a phone-verified user', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/webhooks/secret' })).statusCode).toBe(401);
    const unverified = await registerUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/webhooks/secret', headers: bearer(unverified.token) });
    expect(res.statusCode).toBe(403);
  });

  it('creates a whsec_ secret on first use and answers the same one after; users have their own', async () => {
    const [a, b] = [await createVerifiedUser(t), await createVerifiedUser(t)];
    const [first, again] = await Promise.all([secretOf(t, a.token), secretOf(t, a.token)]);
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(again).toBe(first);
    expect(await secretOf(t, a.token)).toBe(first);
    expect(await secretOf(t, b.token)).not.toBe(first);
    // Sealed at rest: the clear secret is not in the table.
    const row = await t.database.db
      .selectFrom('webhook_secrets')
      .selectAll()
      .where('user_id', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(first.slice(6));
  });

  it('rotates: the new secret is answered, and for 24 h deliveries carry both signatures', async () => {
    const user = await createVerifiedUser(t);
    const old = await secretOf(t, user.token);
    const res = await t.app.inject({ method: 'POST', url: '/api/webhooks/secret/rotate', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    const rotated = res.json();
    expect(rotated.secret).not.toBe(old);
    expect(Date.parse(rotated.previousSecretValidUntil)).toBe(t.clock.now() + 24 * 3600_000);
    expect(await secretOf(t, user.token)).toBe(rotated.secret);

    const [id] = await enqueue(t, [
      { userId: user.id, url: `${receiver.url}/rotated`, type: 'call_status', data: data(1) },
    ]);
    await receiver.waitFor((all) => all.some((r) => r.headers['webhook-id'] === id));
    const request = receiver.received.find((r) => r.headers['webhook-id'] === id)!;
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWithOracle(rotated.secret, request)).toMatchObject({ type: 'call_status' });
    expect(verifyWithOracle(old, request)).toMatchObject({ type: 'call_status' });
  });
});

describe('delivery', () => {
  it('POSTs the signed message once; a 2xx ends it', async () => {
    const user = await createVerifiedUser(t);
    const secret = await secretOf(t, user.token);
    const [id] = await enqueue(t, [
      { userId: user.id, url: `${receiver.url}/hook?x=1`, type: 'call_status', data: data(2) },
    ]);
    expect(id).toMatch(/^msg_[0-9a-f]{32}$/);
    await eventually(async () => (await deliveryRow(t, id)).status === 'delivered', 5000, 'delivered');
    const requests = receiver.received.filter((r) => r.headers['webhook-id'] === id);
    expect(requests).toHaveLength(1);
    expect(requests[0].path).toBe('/hook?x=1');
    expect(requests[0].headers['content-type']).toBe('application/json');
    const body = verifyWithOracle(secret, requests[0]) as Record<string, unknown>;
    expect(body).toEqual({ type: 'call_status', timestamp: new Date(t.clock.now()).toISOString(), data: data(2) });
    const row = await deliveryRow(t, id);
    expect(row).toMatchObject({ attempts: 1, last_status_code: 204, last_error: null });
  });

  it('retries a non-2xx answer with the same id and body after the backoff, until a 2xx', async () => {
    const user = await createVerifiedUser(t);
    const secret = await secretOf(t, user.token);
    let failures = 2;
    const path = '/flaky';
    receiver.setResponder((r) => (r.path === path && failures-- > 0 ? 500 : 204));
    const [id] = await enqueue(t, [
      { userId: user.id, url: `${receiver.url}${path}`, type: 'call_status', data: data(3) },
    ]);
    const worker = t.services.webhooks.webhookWorker;
    const sent = () => receiver.received.filter((r) => r.path === path).length;
    await receiver.waitFor(() => sent() === 1);
    await worker.whenIdle();
    const afterFirst = await deliveryRow(t, id);
    expect(afterFirst.status).toBe('pending');
    expect(afterFirst.last_error).toBe('HTTP 500');
    // Due 5 s (±25 %) later: nothing happens before the clock gets there.
    const wait = Number(afterFirst.next_attempt_at) - t.clock.now();
    expect(wait).toBeGreaterThanOrEqual(3750);
    expect(wait).toBeLessThanOrEqual(6250);
    t.clock.advance(wait - 1);
    worker.wake();
    await worker.whenIdle();
    expect(sent()).toBe(1);
    t.clock.advance(1);
    await receiver.waitFor(() => sent() === 2);
    await worker.whenIdle();
    const afterSecond = await deliveryRow(t, id);
    expect(afterSecond).toMatchObject({ status: 'pending', attempts: 2 });
    expect(Number(afterSecond.next_attempt_at) - t.clock.now()).toBeGreaterThanOrEqual(7500); // 10 s ± 25 %
    expect(Number(afterSecond.next_attempt_at) - t.clock.now()).toBeLessThanOrEqual(12_500);
    t.clock.advance(Number(afterSecond.next_attempt_at) - t.clock.now());
    await eventually(async () => (await deliveryRow(t, id)).status === 'delivered', 5000, 'delivered');
    const requests = receiver.received.filter((r) => r.path === path);
    expect(requests.map((r) => r.answered)).toEqual([500, 500, 204]);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    for (const r of requests) {
      expect(r.headers['webhook-id']).toBe(id);
      expect(verifyWithOracle(secret, r)).toMatchObject({ data: data(3) });
    }
    receiver.setResponder(() => 204);
  });

  it('counts a receiver that does not answer in time as a failed attempt and retries', async () => {
    const user = await createVerifiedUser(t);
    await secretOf(t, user.token);
    let hung = false;
    receiver.setResponder((r) => (r.path === '/slow' && !hung ? ((hung = true), 'hang') : 204));
    const [id] = await enqueue(t, [
      { userId: user.id, url: `${receiver.url}/slow`, type: 'call_status', data: data(4) },
    ]);
    await receiver.waitFor((all) => all.some((r) => r.path === '/slow'));
    await t.services.webhooks.webhookWorker.whenIdle();
    expect((await deliveryRow(t, id)).last_error).toBe('timed out');
    t.clock.advance(Number((await deliveryRow(t, id)).next_attempt_at) - t.clock.now());
    await eventually(async () => (await deliveryRow(t, id)).status === 'delivered', 5000, 'delivered');
    expect(receiver.received.filter((r) => r.path === '/slow')).toHaveLength(2);
    receiver.setResponder(() => 204);
  });

  it('gives up 24 h after the delivery was created: marked failed, no more attempts', async () => {
    const user = await createVerifiedUser(t);
    await secretOf(t, user.token);
    receiver.setResponder((r) => (r.path === '/down' ? 503 : 204));
    const created = t.clock.now();
    const [id] = await enqueue(t, [
      { userId: user.id, url: `${receiver.url}/down`, type: 'call_status', data: data(5) },
    ]);
    const worker = t.services.webhooks.webhookWorker;
    const sentTo = () => receiver.received.filter((r) => r.path === '/down').length;
    for (let attempt = 1; attempt < 100; attempt++) {
      await receiver.waitFor(() => sentTo() === attempt, 5000);
      await worker.whenIdle();
      const row = await deliveryRow(t, id);
      expect(row.attempts).toBe(attempt);
      if (row.status === 'failed') break;
      // Never scheduled past the end of the window.
      expect(Number(row.next_attempt_at)).toBeLessThanOrEqual(created + RETRY_WINDOW_MS);
      expect(Number(row.next_attempt_at)).toBeGreaterThan(t.clock.now());
      t.clock.set(Number(row.next_attempt_at));
      worker.wake();
    }
    const row = await deliveryRow(t, id);
    expect(row.status).toBe('failed');
    expect(t.clock.now()).toBe(created + RETRY_WINDOW_MS);
    // 5 s doubling to 1 h, then hourly: about 33 attempts in a day.
    expect(row.attempts).toBeGreaterThan(20);
    expect(row.attempts).toBeLessThan(45);
    const sent = receiver.received.filter((r) => r.path === '/down').length;
    expect(sent).toBe(row.attempts);
    t.clock.advance(RETRY_WINDOW_MS);
    t.services.webhooks.webhooks.wake();
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received.filter((r) => r.path === '/down')).toHaveLength(sent);
    receiver.setResponder(() => 204);
  });

  it('backs off exponentially with jitter, capped at an hour', () => {
    expect(retryDelayMs(1, () => 0.5)).toBe(5000);
    expect(retryDelayMs(2, () => 0.5)).toBe(10_000);
    expect(retryDelayMs(5, () => 0.5)).toBe(80_000);
    expect(retryDelayMs(30, () => 0.5)).toBe(3600_000);
    expect(retryDelayMs(1, () => 0)).toBe(3750);
    expect(retryDelayMs(1, () => 1)).toBe(6250);
  });
});

describe('GET /api/webhooks/deliveries', () => {
  it("lists the caller's deliveries newest first, with attempts and the last outcome; never another user's", async () => {
    const [user, other] = [await createVerifiedUser(t), await createVerifiedUser(t)];
    await secretOf(t, user.token);
    await secretOf(t, other.token);
    receiver.setResponder((r) => (r.path === '/listed-bad' ? 502 : 204));
    const [good] = await enqueue(t, [
      { userId: user.id, url: `${receiver.url}/listed-good`, type: 'call_status', data: data(6) },
    ]);
    const [bad] = await enqueue(t, [
      { userId: user.id, url: `${receiver.url}/listed-bad`, type: 'call_status', data: data(7) },
    ]);
    await enqueue(t, [{ userId: other.id, url: `${receiver.url}/listed-other`, type: 'call_status', data: data(8) }]);
    await receiver.waitFor((all) =>
      ['/listed-good', '/listed-bad', '/listed-other'].every((p) => all.some((r) => r.path === p)),
    );
    await t.services.webhooks.webhookWorker.whenIdle();
    const res = await t.app.inject({ method: 'GET', url: '/api/webhooks/deliveries', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list.map((d: { id: string }) => d.id)).toEqual([bad, good]);
    expect(list[0]).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: 502,
      lastError: 'HTTP 502',
      type: 'call_status',
      url: `${receiver.url}/listed-bad`,
    });
    expect(Date.parse(list[0].nextAttemptAt)).toBeGreaterThan(t.clock.now());
    expect(list[1]).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 204,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(
      (
        await t.app.inject({ method: 'GET', url: '/api/webhooks/deliveries?limit=1', headers: bearer(user.token) })
      ).json(),
    ).toHaveLength(1);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/webhooks/deliveries?limit=0', headers: bearer(user.token) }))
        .statusCode,
    ).toBe(400);
    receiver.setResponder(() => 204);
  });
});

describe('webhook URLs and private addresses', () => {
  it('refuses private and loopback targets unless allowed (production default)', async () => {
    const prod = await createTestApp({
      config: { webhooks: { allowPrivate: false, timeoutMs: 500, pollIntervalMs: 1000 } },
    });
    try {
      const { webhooks } = prod.services.webhooks;
      for (const url of [
        'http://127.0.0.1:8080/x',
        'http://10.1.2.3/x',
        'http://[::1]/x',
        'http://localhost/x',
        'http://169.254.169.254/latest',
        'ftp://example.com/x',
        'http://user:pw@example.com/x',
        'not a url',
      ]) {
        expect(() => webhooks.checkUrl(url), url).toThrow(expect.objectContaining({ code: 'invalid_input' }));
      }
      expect(webhooks.checkUrl('https://hooks.example.com/calls')).toBe('https://hooks.example.com/calls');
      expect(t.services.webhooks.webhooks.checkUrl(`${receiver.url}/x`)).toBe(`${receiver.url}/x`);
      // At send time the resolved address is checked (by the one outbound client): nothing reaches a loopback receiver.
      const before = receiver.received.length;
      const sender = createWebhookSender();
      const headers = { 'webhook-id': 'm', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' };
      try {
        for (const url of [`${receiver.url}/x`, 'http://localhost:8080/x']) {
          const refused = await sender
            .send(url, headers, '{}', { timeoutMs: 500, allowPrivate: false })
            .catch((e: unknown) => e);
          expect(refused, url).toBeInstanceOf(OutboundHttpError);
          expect(refused).toMatchObject({ reason: 'blocked_address' });
        }
        // A name whose DNS answer is a private address is refused the same way (the resolver is the test's; no packet leaves).
        const rebinding = createWebhookSender({
          lookup: ((
            _host: string,
            _opts: unknown,
            cb: (e: null, a: Array<{ address: string; family: number }>) => void,
          ) => cb(null, [{ address: '169.254.169.254', family: 4 }])) as never,
        });
        const refused = await rebinding
          .send('http://hooks.example.com/x', headers, '{}', { timeoutMs: 500, allowPrivate: false })
          .catch((e: unknown) => e);
        expect(refused).toMatchObject({
          reason: 'blocked_address',
          message: expect.stringContaining('169.254.169.254'),
        });
        await rebinding.close();
      } finally {
        await sender.close();
      }
      // A delivery whose target is refused at send time is a failed attempt with the reason recorded, and is retried later.
      const user = await createVerifiedUser(prod);
      await secretOf(prod, user.token);
      const [id] = await enqueue(prod, [
        { userId: user.id, url: `${receiver.url}/refused`, type: 'call_status', data: data(9) },
      ]);
      await eventually(async () => (await deliveryRow(prod, id)).last_error !== null, 5000, 'an attempt recorded');
      expect(await deliveryRow(prod, id)).toMatchObject({
        status: 'pending',
        last_status_code: null,
        last_error: expect.stringContaining('not a public address'),
      });
      expect(receiver.received.length).toBe(before);
    } finally {
      await prod.close();
    }
  });
});

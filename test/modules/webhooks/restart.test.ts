// The delivery queue survives restarts, and instances sharing one database
// never send a delivery twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';
import { eventually } from '../events/support.js';
import { deliveryRow, enqueue, fastWebhooks, verifyWithOracle, webhookApp } from './support.js';

// Owns the database for the whole file; its own worker is stopped, so only the apps under test send.
let holder: TestApp;
let receiver: WebhookReceiver;
beforeAll(async () => {
  holder = await webhookApp();
  await holder.services.webhooks.webhookWorker.stop();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await holder.close();
  await receiver.close();
});

const instance = (timeoutMs = 2000) =>
  webhookApp({ shareDatabaseWith: holder, clock: holder.clock, config: fastWebhooks({ timeoutMs }) });
const data = (n: number) => ({ session_id: `r${n}`, status: 'completed', at: '2026-11-23T10:00:00.000Z' });

describe('restarts', () => {
  it('a delivery failing when the app closes is delivered, once, by the next app on the same database', async () => {
    const first = await instance();
    const user = await createVerifiedUser(first);
    const secret = (await first.services.webhooks.webhooks.getSecret(user.id)).secret;
    receiver.setResponder((r) => (r.path === '/restart' ? 500 : 204));
    const [id] = await enqueue(first, [
      { userId: user.id, url: `${receiver.url}/restart`, type: 'call_status', data: data(1) },
    ]);
    await receiver.waitFor((all) => all.some((r) => r.path === '/restart'));
    await first.services.webhooks.webhookWorker.whenIdle();
    expect((await deliveryRow(holder, id)).status).toBe('pending');
    await first.close();

    receiver.setResponder(() => 204);
    holder.clock.advance(60_000);
    const second = await instance();
    try {
      await eventually(
        async () => (await deliveryRow(holder, id)).status === 'delivered',
        5000,
        'delivered after restart',
      );
      const requests = receiver.received.filter((r) => r.path === '/restart');
      expect(requests.map((r) => r.answered)).toEqual([500, 204]);
      expect(verifyWithOracle(secret, requests[1])).toMatchObject({ data: data(1) });
      expect(receiver.delivered().filter((r) => r.headers['webhook-id'] === id)).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('closing waits for attempts under way, so the next app neither loses nor repeats them', async () => {
    const first = await instance();
    const user = await createVerifiedUser(first);
    await first.services.webhooks.webhooks.getSecret(user.id);
    const held: Array<() => void> = [];
    receiver.setResponder((r) =>
      r.path === '/closing' && held.length === 0 ? (held.push(() => undefined), 'hang') : 204,
    );
    const [id] = await enqueue(first, [
      { userId: user.id, url: `${receiver.url}/closing`, type: 'call_status', data: data(2) },
    ]);
    await receiver.waitFor((all) => all.some((r) => r.path === '/closing'));
    await first.close(); // the hanging attempt times out (2 s) and is recorded as a failure first
    expect(await deliveryRow(holder, id)).toMatchObject({ status: 'pending', attempts: 1, last_error: 'timed out' });

    holder.clock.advance(60_000);
    const second = await instance();
    try {
      await eventually(
        async () => (await deliveryRow(holder, id)).status === 'delivered',
        5000,
        'delivered after restart',
      );
      expect(receiver.received.filter((r) => r.path === '/closing')).toHaveLength(2);
      expect(receiver.delivered().filter((r) => r.headers['webhook-id'] === id)).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});

describe('an instance that dies during an attempt', () => {
  it('leaves the delivery claimed until its lease ends; then another instance sends it', async () => {
    const user = await createVerifiedUser(holder);
    await holder.services.webhooks.webhooks.getSecret(user.id);
    receiver.setResponder(() => 204);
    const [id] = await enqueue(holder, [
      { userId: user.id, url: `${receiver.url}/lease`, type: 'call_status', data: data(3) },
    ]);
    // What a worker does before sending; its process then disappears without recording anything.
    const now = holder.clock.now();
    const claimed = await holder.services.webhooks.webhookStore.claimDue(now, now + 30_000, 100);
    expect(claimed.map((d) => d.id)).toContain(id);
    const other = await instance();
    try {
      other.services.webhooks.webhooks.wake();
      await other.services.webhooks.webhookWorker.whenIdle();
      expect(receiver.received.filter((r) => r.path === '/lease')).toHaveLength(0);
      holder.clock.advance(30_000);
      await eventually(
        async () => (await deliveryRow(holder, id)).status === 'delivered',
        5000,
        'delivered after the lease',
      );
      expect(receiver.received.filter((r) => r.path === '/lease')).toHaveLength(1);
      expect((await deliveryRow(holder, id)).attempts).toBe(2);
    } finally {
      await other.close();
    }
  });
});

describe('several instances', () => {
  it('two apps working one queue send each of 200 deliveries exactly once', async () => {
    // A generous time limit: on a busy machine 200 requests at once can take a while to answer, and a late answer is retried.
    const [a, b] = [await instance(10_000), await instance(10_000)];
    try {
      const user = await createVerifiedUser(a);
      const secret = (await a.services.webhooks.webhooks.getSecret(user.id)).secret;
      receiver.setResponder(() => 204);
      const deliveries = Array.from({ length: 200 }, (_, i) => ({
        userId: user.id,
        url: `${receiver.url}/many`,
        type: 'call_status',
        data: data(100 + i),
      }));
      const ids = [...(await enqueue(a, deliveries.slice(0, 100))), ...(await enqueue(b, deliveries.slice(100)))];
      b.services.webhooks.webhooks.wake();
      a.services.webhooks.webhooks.wake();
      await receiver.waitFor((all) => all.filter((r) => r.path === '/many').length >= 200);
      await Promise.all([a.services.webhooks.webhookWorker.whenIdle(), b.services.webhooks.webhookWorker.whenIdle()]);
      const many = receiver.received.filter((r) => r.path === '/many');
      expect(many).toHaveLength(200);
      expect(new Set(many.map((r) => r.headers['webhook-id']))).toEqual(new Set(ids));
      for (const r of many.slice(0, 5)) verifyWithOracle(secret, r);
      const rows = await holder.database.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'attempts', 'last_error', 'last_status_code'])
        .where('id', 'in', ids)
        .execute();
      expect(rows.filter((r) => !(r.status === 'delivered' && Number(r.attempts) === 1))).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('the claim', () => {
  it('takes at most its limit, however many claims run at once, and never one delivery twice', async () => {
    const user = await createVerifiedUser(holder);
    await holder.services.webhooks.webhooks.getSecret(user.id);
    const ids = await enqueue(
      holder,
      Array.from({ length: 60 }, (_, i) => ({
        userId: user.id,
        url: `${receiver.url}/claim`,
        type: 'call_status' as const,
        data: data(100 + i),
      })),
    );
    const store = holder.services.webhooks.webhookStore;
    const now = holder.clock.now();
    // PostgreSQL once claimed more than asked for: the planner ran the limited, skip-locked pick again.
    const claims = await Promise.all(Array.from({ length: 12 }, () => store.claimDue(now, now + 30_000, 5)));
    for (const claim of claims) expect(claim.length).toBeLessThanOrEqual(5);
    const claimed = claims.flat().map((d) => d.id);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.every((id) => ids.includes(id))).toBe(true);
    expect(claimed.length).toBeGreaterThan(5);
  });
});

// Helpers for webhook tests: apps with a fast-polling worker, enqueueing as
// the calls service does (in a transaction, then wake), and the oracle check.
import { Webhook } from 'standardwebhooks';
import type { Config } from '../../../src/config.js';
import type { NewDelivery } from '../../../src/modules/webhooks/service.js';
import { type TestApp, type TestAppOptions, createTestApp } from '../../support/app.js';
import type { ReceivedWebhook } from '../../support/webhook-receiver.js';

export const fastWebhooks = (overrides: Partial<Config['webhooks']> = {}): Partial<Config> => ({
  webhooks: { allowPrivate: true, timeoutMs: 2000, pollIntervalMs: 20, ...overrides },
});

export function webhookApp(options: TestAppOptions = {}): Promise<TestApp> {
  return createTestApp({ ...options, config: { ...fastWebhooks(), ...options.config } });
}

export async function enqueue(t: TestApp, deliveries: NewDelivery[]): Promise<string[]> {
  const ids = await t.database.db.transaction().execute((trx) => t.services.webhooks.webhooks.enqueue(trx, deliveries));
  t.services.webhooks.webhooks.wake();
  return ids;
}

/** Verifies a received request with the official library; returns the parsed body. */
export function verifyWithOracle(secret: string, request: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}

export async function deliveryRow(t: TestApp, id: string) {
  return t.database.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

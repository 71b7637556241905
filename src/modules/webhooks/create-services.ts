// Builds the outbound-webhook services: secrets and enqueueing (service), and
// the delivery worker that the app starts when ready and stops on close.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Metrics } from '../platform/metrics.js';
import { type SendWebhook, createWebhookSender } from './send.js';
import { WebhookService } from './service.js';
import { WebhookStore } from './store.js';
import { WebhookWorker } from './worker.js';

export interface WebhookServiceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  secretBox: SecretBox;
  clock: Clock;
  /** WEBHOOK_* (timeouts, polling, private addresses). */
  config: Pick<Config, 'webhooks'>;
  send?: SendWebhook;
  /** Counts each failed delivery attempt. */
  metrics?: Pick<Metrics, 'webhookFailures'>;
}

export function createWebhookServices(deps: WebhookServiceDeps) {
  const store = new WebhookStore(deps.db, deps.dialect);
  const config = deps.config.webhooks;
  const webhooks = new WebhookService(store, deps.secretBox, deps.clock, config);
  const sender = deps.send ? null : createWebhookSender();
  const worker = new WebhookWorker(
    {
      store,
      signingSecrets: (userId) => webhooks.signingSecrets(userId),
      send: deps.send ?? sender!.send,
      clock: deps.clock,
      ...(deps.metrics ? { onAttemptFailed: () => deps.metrics?.webhookFailures.inc() } : {}),
    },
    {
      timeoutMs: config.timeoutMs,
      pollIntervalMs: config.pollIntervalMs,
      allowPrivate: config.allowPrivate,
    },
  );
  webhooks.onWake(() => worker.wake());
  /** Stops the worker, then closes the sender's connections (app close). */
  const stop = async () => {
    await worker.stop();
    await sender?.close();
  };
  return { webhooks, webhookWorker: worker, webhookStore: store, stop };
}

export type WebhookServices = ReturnType<typeof createWebhookServices>;
